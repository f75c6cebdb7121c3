"""Keras 3 `fit` fed a NaN: one sample of the training data holds a NaN. fit runs `multi_step_on_iterator`, which
calls `one_step_on_data` on each batch IteratorGetNext hands out; the first op to see the NaN is the model's first
layer inside the nested function, whose input is the iterator's output of the same step. The line to fix is the
one that built the data (CULPRIT). Args: DUMP_DIR [MODE] [VARIANT: array | dict | dataset]."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))
variant = _common.arg(3, "array")
keras = tf.keras
tf.keras.utils.set_random_seed(0)  # Keras's initializers ignore tf.random.set_seed

rng = np.random.RandomState(0)
features = rng.rand(32, 4).astype("float32")
features[13, 2] = np.nan  # CULPRIT
labels = rng.rand(32, 1).astype("float32")
if variant == "dict":
    inputs = {"a": keras.Input((4,), name="a"), "b": keras.Input((2,), name="b")}
    hidden = keras.layers.Concatenate()([inputs["a"], keras.layers.Dense(2)(inputs["b"])])
    model = keras.Model(inputs, keras.layers.Dense(1)(hidden))
    data = {"a": features, "b": rng.rand(32, 2).astype("float32")}
else:
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="relu"), keras.layers.Dense(1)])
    data = features
model.compile(optimizer="sgd", loss="mse")
if variant == "dataset":
    dataset = tf.data.Dataset.from_tensor_slices((data, labels)).batch(8)  # DATASET
    model.fit(dataset, epochs=1, verbose=0)
else:
    model.fit(data, labels, epochs=1, batch_size=8, shuffle=False, verbose=0)  # FIT

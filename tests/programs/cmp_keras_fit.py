"""Compare pair, as a user writes it: a Keras model trained with Model.fit, recorded in FULL_HEALTH (or the mode
given). The changed run (VARIANT b) adds a clip layer before the ReLU: the clip changes values, not their signs, so
the ReLU keeps its counts and the health modes see the change only further down; variant c changes the learning
rate instead, variant d one sample of the data. Args: DUMP_DIR VARIANT [MODE]."""

import sys

import _common
import numpy as np

VARIANT = _common.arg(2, "a")
tf = _common.enable(sys.argv[1], _common.arg(3, "FULL_HEALTH"))
keras = tf.keras
keras.utils.set_random_seed(0)  # Keras's initializers ignore tf.random.set_seed

x = np.random.RandomState(0).randn(64, 4).astype("float32") * 3.0
y = (x.sum(axis=1, keepdims=True) > 0).astype("float32")
if VARIANT == "d":  # variant d: one sample zeroed (a changed batch, same labels)
    x[5] = 0.0
layers = [keras.Input((4,)), keras.layers.Dense(8, name="hidden")]
if VARIANT == "b":
    layers.append(keras.layers.Lambda(lambda t: tf.clip_by_value(t, -1.0, 1.0), name="clip"))  # INJECTED
layers += [keras.layers.ReLU(name="act"), keras.layers.Dense(1, name="out")]
model = keras.Sequential(layers, name="classifier")
rate = 0.05 if VARIANT == "c" else 0.01  # variant c: the learning rate
model.compile(optimizer=keras.optimizers.SGD(rate), loss="mse", jit_compile=False)
# fit() on numpy arrays, as users write it: Keras gathers the batches in a parallel tf.data map, whose traces land in
# the dump in the threads' order (occurrence k of Dataset_map_grab_batch's GatherV2 is not always batch k)
model.fit(x, y, batch_size=16, epochs=2, verbose=0)

"""Keras `fit` with validation data whose last batch is partial (#38 item 9): 20 validation rows in batches of 8
are 8, 8, 4, and the training set too ends short (44 rows: 8 x5, then 4). Every op of the evaluation and training
steps sees its batch dimension shrink once, on the last batch of each pass. That is what a dataset not divisible
by the batch size does, not a bug: one shape_change per function at most, never one per op. Args: DUMP_DIR [EPOCHS]."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], "FULL_HEALTH")
epochs = int(_common.arg(2, "1"))
tf.keras.utils.set_random_seed(0)
rng = np.random.RandomState(0)
x, y = rng.rand(44, 4).astype("float32"), rng.rand(44, 1).astype("float32")
x_val, y_val = rng.rand(20, 4).astype("float32"), rng.rand(20, 1).astype("float32")
layers = [tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(1)]
model = tf.keras.Sequential(layers)
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, validation_data=(x_val, y_val), batch_size=8, epochs=epochs, shuffle=False, verbose=0)

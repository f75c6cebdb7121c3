"""Keras's step retraced by the user's calls (#38 item 4). Args: DUMP_DIR [MODE].

A learning rate set by hand, epoch by epoch, by compiling the model again before each `fit`: Keras makes its step
function (`multi_step_on_iterator`, Keras's code, not the user's) anew on every compile(), so each `fit` call traces
it again — six traces of a function the user did not write, each made by the user's `fit` line (CALL). The fix is
the user's: compile once, set the rate on the optimizer."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))
tf.keras.utils.set_random_seed(0)
x = np.random.RandomState(0).rand(32, 4).astype("float32")
y = x.sum(axis=1, keepdims=True)
model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
for epoch in range(6):
    model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.1 / (epoch + 1)), loss="mse")
    model.fit(x, y, epochs=1, batch_size=16, verbose=0)  # CALL

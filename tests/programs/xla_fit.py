"""Keras `model.fit` compiled by XLA (`jit_compile` set in `compile`) with dumping on (#38 item 1). tfdbg2's debug
ops have no XLA kernel, so the compiled step fails to compile and TensorFlow raises; the dump holds the program's
graphs but no trace of the step. The program catches what TensorFlow raises (as a notebook would show it) and exits 0,
so the test reads the dump.
"""

import sys

import _common
import numpy as np

tf = _common.enable(sys.argv[1], "FULL_HEALTH")
tf.keras.utils.set_random_seed(0)

x = np.random.RandomState(0).rand(32, 4).astype("float32")
y = (x.sum(axis=1, keepdims=True) > 2).astype("float32")
model = tf.keras.Sequential(
    [tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(1)]
)
model.compile(optimizer="sgd", loss="mse", jit_compile=True)
try:
    model.fit(x, y, epochs=1, batch_size=16, verbose=0)
except Exception as e:  # noqa: BLE001 - the user's program dies here; the dump is what is left
    print(f"{type(e).__name__}: {str(e)[:300]}", file=sys.stderr)

"""A custom training loop whose step is a `tf.function` compiled by XLA, with dumping on (#38 item 1): the compiled
step fails to compile (tfdbg2's debug ops have no XLA kernel) and TensorFlow raises at the first call; the program
catches it and exits 0, so the test reads what the dump holds: the step's graph, no trace of it.
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
optimizer = tf.keras.optimizers.SGD(0.1)


def step(xb, yb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(xb) - yb))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


train_step = tf.function(step, jit_compile=True)
try:
    for i in range(2):
        train_step(x[i * 16 : (i + 1) * 16], y[i * 16 : (i + 1) * 16])
except Exception as e:  # noqa: BLE001 - the user's program dies here; the dump is what is left
    print(f"{type(e).__name__}: {str(e)[:300]}", file=sys.stderr)

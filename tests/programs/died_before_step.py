"""A program that dies between building its training step and the step's first call (#38 item 1): the dump holds
the step's graph (traced by `get_concrete_function`, as a first call or an export would) and the eager variable
initialisations, but no trace of the step. Nothing in it went non-finite, and nothing in it says the step was fine.
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


train_step = tf.function(step)
train_step.get_concrete_function(tf.TensorSpec((16, 4)), tf.TensorSpec((16, 1)))
try:
    raise MemoryError("the program died before its first step (out of memory, a KeyboardInterrupt, a killed job)")
except MemoryError as e:
    print(f"{type(e).__name__}: {e}", file=sys.stderr)

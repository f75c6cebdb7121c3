"""Compare pair with hundreds of divergent traces: the update's step size differs from the first step on, so every
tensor of every later step differs (Graph Execution's "divergent only" list pages past its first 200 rows).
Args: DUMP_DIR VARIANT [MODE]."""

import _common

B = _common.arg(2, "a") == "b"
tf = _common.enable(__import__("sys").argv[1], _common.arg(3, "FULL_TENSOR"))

w = tf.Variable([[0.5], [-0.25]])
x = tf.constant([[1.0, 2.0], [0.5, -1.0], [2.0, 1.0]])
y = tf.constant([[1.0], [0.0], [2.0]])


@tf.function
def train():
    with tf.GradientTape() as tape:
        err = tf.matmul(x, w, name="pred") - y
        loss = tf.reduce_mean(tf.square(err), name="mse")
    g = tape.gradient(loss, w)
    w.assign_sub(tf.multiply(0.05 if B else 0.1, g, name="step"))  # INJECTED
    return loss


for _ in range(40):
    train()

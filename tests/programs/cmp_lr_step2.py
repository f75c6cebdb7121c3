"""Compare pair: a learning rate changed from step 2 on (computed eagerly, passed into the train step).
Args: DUMP_DIR VARIANT [MODE]."""

import _common

B = _common.arg(2, "a") == "b"
tf = _common.enable(__import__("sys").argv[1], _common.arg(3, "FULL_TENSOR"))

w = tf.Variable([[0.5], [-0.25]])
x = tf.constant([[1.0, 2.0], [0.5, -1.0], [2.0, 1.0]])
y = tf.constant([[1.0], [0.0], [2.0]])


@tf.function
def train(lr):
    with tf.GradientTape() as tape:
        err = tf.matmul(x, w, name="pred") - y
        loss = tf.reduce_mean(tf.square(err), name="mse")
    g = tape.gradient(loss, w)
    w.assign_sub(lr * g)
    return loss


for step in range(4):
    lr = tf.multiply(0.1, 0.5 if B and step >= 2 else 1.0)  # INJECTED
    train(lr)

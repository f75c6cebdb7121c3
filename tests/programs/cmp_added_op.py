"""Compare pair: B adds an op in the middle of a tf.function. Args: DUMP_DIR VARIANT [MODE]."""

import _common

B = _common.arg(2, "a") == "b"
tf = _common.enable(__import__("sys").argv[1], _common.arg(3, "FULL_TENSOR"))


@tf.function
def step(x, w):
    h = tf.matmul(x, w, name="dense")
    if B:
        h = tf.math.tanh(h, name="squash")  # INJECTED
    out = tf.nn.relu(h, name="act")
    return tf.reduce_sum(out, name="total")


w = tf.constant([[0.5, -1.0], [1.5, 0.25]])
for i in range(3):
    step(tf.constant([[1.0, 2.0], [3.0, -4.0]]) * float(i + 1), w)

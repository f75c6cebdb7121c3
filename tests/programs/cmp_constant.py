"""Compare pair: a constant changed inside a tf.function. Args: DUMP_DIR VARIANT(a|b|...) [MODE]."""

import _common

B = _common.arg(2, "a") == "b"
tf = _common.enable(__import__("sys").argv[1], _common.arg(3, "FULL_TENSOR"))


@tf.function
def step(x):
    h = tf.nn.relu(x - 0.5, name="shifted")
    scaled = tf.multiply(h, 2.5 if B else 2.0, name="scaled")  # INJECTED
    return tf.reduce_sum(scaled * h, name="total")


for i in range(3):
    step(tf.constant([0.0, 1.0, 2.0, 3.0]) + float(i))

"""Compare pair: a shift changed so that B takes the square root of negatives (NaN only in B).
Args: DUMP_DIR VARIANT [MODE]."""

import _common

B = _common.arg(2, "a") == "b"
tf = _common.enable(__import__("sys").argv[1], _common.arg(3, "FULL_HEALTH"))


@tf.function
def step(x):
    centered = tf.subtract(x, 2.5 if B else 0.5, name="centered")  # INJECTED
    root = tf.sqrt(centered, name="root")
    return tf.reduce_sum(root, name="total")


for i in range(3):
    step(tf.constant([1.0, 2.0, 3.0, 4.0]) + float(i))

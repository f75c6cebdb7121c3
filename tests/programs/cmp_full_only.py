"""Compare pair: a change only FULL_TENSOR can see (positive values scaled: no count changes).
Args: DUMP_DIR VARIANT [MODE]."""

import _common

B = _common.arg(2, "a") == "b"
tf = _common.enable(__import__("sys").argv[1], _common.arg(3, "FULL_TENSOR"))


@tf.function
def step(x):
    sq = tf.square(x, name="sq")
    gain = tf.multiply(sq, 1.6 if B else 1.5, name="gain")  # INJECTED
    return tf.reduce_sum(tf.sqrt(gain + 1.0), name="total")


for i in range(2):
    step(tf.constant([1.0, 2.0, 3.0]) + float(i))

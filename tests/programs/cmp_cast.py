"""Compare pair: a dtype cast (float64 vs float16 intermediate). Args: DUMP_DIR VARIANT [MODE]."""

import _common

B = _common.arg(2, "a") == "b"
tf = _common.enable(__import__("sys").argv[1], _common.arg(3, "FULL_TENSOR"))


@tf.function
def step(x):
    y = tf.exp(x, name="grow")
    low = tf.cast(y, tf.float16 if B else tf.float64, name="lowp")  # INJECTED
    back = tf.cast(low, tf.float32, name="back")
    return tf.reduce_sum(back * 3.0, name="total")


for i in range(2):
    step(tf.constant([0.1, 1.3, 2.7, 4.9]) * float(i + 1))

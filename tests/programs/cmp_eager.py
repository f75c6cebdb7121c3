"""Compare pair: an eager-only change (no tf.function). Args: DUMP_DIR VARIANT [MODE]."""

import _common

B = _common.arg(2, "a") == "b"
tf = _common.enable(__import__("sys").argv[1], _common.arg(3, "FULL_TENSOR"))

x = tf.constant([1.0, 2.0, 3.0, 4.0])
for _i in range(3):
    y = tf.square(x)
    z = tf.multiply(y, 0.3 if B else 0.25)  # INJECTED
    s = tf.reduce_sum(z + tf.sqrt(y))
    x = x + 1.0

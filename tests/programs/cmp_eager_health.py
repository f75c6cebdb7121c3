"""Compare pair: an eager-only change that moves health counts (a shift before a ReLU), recorded in FULL_HEALTH.
Args: DUMP_DIR VARIANT [MODE]."""

import _common

B = _common.arg(2, "a") == "b"
tf = _common.enable(__import__("sys").argv[1], _common.arg(3, "FULL_HEALTH"))

x = tf.constant([1.0, -2.0, 3.0, -4.0])
for _i in range(40):
    shifted = tf.nn.relu(x - (2.5 if B else 0.5))  # INJECTED
    y = tf.square(shifted)
    x = x + 0.01

"""Circular buffer (arg 2: size, default 1000 = TF's default) over more steps than it holds."""

import _common

tf = _common.enable(__import__("sys").argv[1], "CONCISE_HEALTH", int(_common.arg(2, "1000")))


@tf.function
def f(x):
    return tf.nn.relu(x * 3.0 - 1.0)


for i in range(int(_common.arg(3, "30"))):
    f(tf.constant([float(i), -1.0]))

"""Eager ops only (no tf.function): float math producing -inf and NaN, an int op, a bool op. Args: [mode]."""

import _common

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))
x = tf.constant([0.0, 1.0, 2.0])
y = tf.math.log(x)  # -inf at 0
z = y * tf.constant(0.0)  # NaN
n = tf.constant([1, 2, 3]) + 4
b = tf.greater(x, 0.5)
s = tf.reduce_sum(tf.where(b, x, tf.zeros_like(x)))
_ = (z, n, s)

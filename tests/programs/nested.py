"""Nested tf.function with tf.while_loop and tf.cond; one NaN from sqrt of a negative. Args: [mode] [steps]."""

import _common

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))


@tf.function
def inner(v):
    return tf.cond(tf.reduce_sum(v) > 0.0, lambda: v * 2.0, lambda: tf.sqrt(v))


@tf.function
def outer(v):
    i = tf.constant(0)

    def body(i, v):
        return i + 1, inner(v) - 1.5

    _, v = tf.while_loop(lambda i, v: i < 3, body, [i, v])
    return v


for step in range(int(_common.arg(3, "2"))):
    outer(tf.constant([1.0, 0.5 + step]))

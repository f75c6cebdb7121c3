"""One program for every debug mode (arg 2): a tf.function over float16/bfloat16/float32/float64/int/bool tensors,
scalars (FULL_TENSOR stores them as typed fields), a -inf and a NaN, and a function returning a float and an int
tensor (eager records then mix a health vector with an empty placeholder)."""

import _common

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))


@tf.function
def compute(x):
    h = tf.cast(x, tf.float16) * tf.constant(2.0, tf.float16)
    bf = tf.cast(x, tf.bfloat16) + tf.constant(1.0, tf.bfloat16)
    d = tf.cast(x, tf.float64) / tf.constant(4.0, tf.float64)
    i = tf.cast(x, tf.int32) * 3
    big = tf.reshape(tf.range(2 * 1 * 2 * 1 * 2 * 1 * 2, dtype=tf.float32), [2, 1, 2, 1, 2, 1, 2])
    lg = tf.math.log(x - 1.0)  # -inf at 1.0, NaN below
    s = tf.reduce_sum(x) * 0.5  # a float scalar
    b = tf.reduce_any(x > 2.0)  # a bool scalar
    return h, bf, d, i, big, lg, s, b


@tf.function
def float_and_int(x):
    return x * 2.0, tf.shape(x)[0]


compute(tf.constant([1.0, 2.0, 3.0, 0.5]))
float_and_int(tf.constant([1.0, 2.0]))

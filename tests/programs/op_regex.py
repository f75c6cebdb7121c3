"""op_regex filtering: only ops whose name matches 'Log|mul' are instrumented."""

import _common

tf = _common.enable(__import__("sys").argv[1], "FULL_HEALTH", -1, op_regex="(Log|mul.*)")


@tf.function
def f(x):
    y = tf.math.log(x, name="Log")
    return tf.multiply(y, 2.0, name="mul") + tf.constant(1.0, name="other")


f(tf.constant([0.0, 1.0]))

"""Mixed precision: a float16 op overflows from finite inputs: 300 * 300 = 90000 exceeds float16's largest finite
value (65504), so the product is +∞. Args: DUMP_DIR [MODE]."""

import _common

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))


@tf.function
def energy(x):
    half = tf.cast(x, tf.float16)
    squared = half * half  # CULPRIT
    return tf.reduce_sum(tf.cast(squared, tf.float32))


for peak in (100.0, 300.0):
    print(float(energy(tf.constant([1.0, peak, 2.0]))))

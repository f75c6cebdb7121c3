"""First ∞ from a division by zero inside a tf.function (then NaN spreads). Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf


@tf.function
def step(x, shift):
    denom = tf.subtract(x, shift, name="denom")  # finite, one element becomes exactly 0
    ratio = tf.divide(1.0, denom, name="ratio")  # CULPRIT
    return tf.reduce_sum(ratio * 0.0, name="total")  # inf * 0 -> NaN: a propagator


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    for shift in (0.5, 1.5, 3.0):  # the third step hits 3.0 - 3.0 = 0
        print(float(step(x, tf.constant(shift))))
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "FULL_HEALTH")

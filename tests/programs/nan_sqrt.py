"""First NaN from the square root of a negative number inside a tf.function. Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf


@tf.function
def spread(x):
    centered = x - tf.reduce_mean(x)  # finite, some elements negative
    root = tf.sqrt(centered)  # CULPRIT
    return tf.reduce_mean(root)


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    for values in ([2.0, 2.0, 2.0], [1.0, 2.0, 6.0]):  # the first call is clean, the second is not
        print(float(spread(tf.constant(values))))
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "FULL_HEALTH")

"""A library-style NaN constant (a "missing value" sentinel a data library returns and nobody reads) comes first;
the user's own NaN (the square root of a negative number) comes later. Muting the sentinel moves the root cause
to the user's line. Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf


def library_stats(x):
    # what a data library might do: report "no value" as NaN, alongside the real statistic
    sentinel = tf.fill([2], float("nan"), name="missing_sentinel")
    return tf.reduce_mean(x), sentinel


@tf.function
def step(x):
    mean, sentinel = library_stats(x)
    root = tf.sqrt(x - mean, name="user_sqrt")  # CULPRIT: negative once the data spread
    return tf.reduce_sum(root), sentinel


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    for values in ([2.0, 2.0, 2.0], [1.0, 2.0, 6.0]):
        total, _ = step(tf.constant(values))
        print(float(total))
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "FULL_HEALTH")

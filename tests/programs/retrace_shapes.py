"""A tf.function retraced by input shapes that change every call. Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf


@tf.function
def row_norms(x):
    return tf.reduce_sum(tf.square(x), axis=1)


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    for rows in range(1, 7):
        print(row_norms(tf.ones([rows, rows + 1])).numpy())  # RETRACE: a new shape each call
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "SHAPE")

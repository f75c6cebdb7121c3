"""A tf.function called six times with one signature: traced once, never retraced. Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf


@tf.function
def scaled_sum(x, scale):
    return tf.reduce_sum(x * scale)


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    x = tf.constant([1.0, 2.0, 3.0])
    for step in range(6):
        print(float(scaled_sum(x * float(step + 1), tf.constant(0.5))))  # one signature: one trace
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "FULL_HEALTH")

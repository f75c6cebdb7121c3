"""A tf.function with a ~20 k-op graph (a long residual stack of small ops), traced and run once with FULL_HEALTH:
the dump bench/neighborhood.py walks. Args: DUMP_DIR [BLOCKS]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

BLOCKS = int(sys.argv[2]) if len(sys.argv) > 2 else 4000


@tf.function
def deep(x):
    skip = x
    for i in range(BLOCKS):  # 5 ops per block: mul, add, sin, add (residual) and a Const
        y = tf.sin(x * 1.0001 + float(i % 7))
        x = y + skip if i % 3 == 0 else y
        skip = x if i % 3 == 0 else skip
    return tf.reduce_sum(x)


def main(dump_dir: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode="FULL_HEALTH", circular_buffer_size=-1)
    print(float(deep(tf.ones([4]))))
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1])

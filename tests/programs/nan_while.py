"""First ∞ from a multiplication that overflows inside a tf.while_loop body (a nested graph). Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf


def body(i, v):
    grown = v * 1e12  # CULPRIT
    return i + 1, grown


@tf.function
def grow(v):
    _, out = tf.while_loop(lambda i, _: i < 6, body, (tf.constant(0), v))
    return out - out  # inf - inf -> NaN: a propagator


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    print(grow(tf.constant([1.0, 2.0])).numpy())  # 1e12 ** 4 > float32 max: the 4th iteration overflows
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "FULL_HEALTH")

"""First NaN from a plain eager op (no tf.function): log of a negative number. Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    a = tf.constant([3.0, 1.0, 4.0])
    shifted = tf.subtract(a, 2.0)  # eager, finite: [1, -1, 2]
    logs = tf.math.log(shifted)  # CULPRIT
    total = tf.reduce_sum(logs)  # NaN in, NaN out: a propagator
    print(float(total))
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "FULL_HEALTH")

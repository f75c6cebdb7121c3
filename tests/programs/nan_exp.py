"""First ∞ from an overflowing exp (float32 overflows above ~88.7) inside a tf.function. Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf


@tf.function
def softmax_by_hand(logits, scale):
    scaled = logits * scale  # finite but large on the second call
    unnormalized = tf.exp(scaled)  # CULPRIT
    return unnormalized / tf.reduce_sum(unnormalized)  # inf / inf -> NaN: a propagator


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    logits = tf.constant([1.0, 5.0, 10.0])
    for scale in (1.0, 20.0):
        print(softmax_by_hand(logits, tf.constant(scale)).numpy())
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "FULL_HEALTH")

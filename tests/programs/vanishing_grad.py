"""A vanishing gradient: the loss is scaled by 1e-9, so every gradient of the weights is around 1e-9 (below the
rule's 1e-7 floor) at every step; FULL_TENSOR records the magnitudes. Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    w = tf.Variable([[0.5], [-0.25]])
    x = tf.constant([[1.0, 2.0], [0.5, -1.0]])

    @tf.function
    def train_step():
        with tf.GradientTape() as tape:
            loss = 1e-9 * tf.reduce_sum(tf.matmul(x, w))  # VANISHES: the gradient is ~1e-9
        w.assign_sub(tape.gradient(loss, w))
        return loss

    for _ in range(5):
        print(float(train_step()))
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "FULL_TENSOR")

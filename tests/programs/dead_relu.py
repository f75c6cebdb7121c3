"""A layer whose ReLU output goes dead: its bias is pushed down each step until every unit is zero (from the 4th
step on). Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    x = tf.constant([[1.0, 0.5], [0.2, 0.3], [0.7, 0.1]])
    w = tf.Variable([[0.5, -0.2, 0.3], [0.1, 0.4, -0.3]])
    b = tf.Variable([0.5, 0.5, 0.5])

    @tf.function
    def train_step():
        hidden = tf.nn.relu(tf.matmul(x, w) + b, name="hidden_relu")  # DEAD: all zero once b < -1
        b.assign_sub([0.6, 0.6, 0.6])  # a learning rate far too high drives the bias negative
        return tf.reduce_sum(hidden)

    for _ in range(8):
        print(float(train_step()))
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "FULL_HEALTH")

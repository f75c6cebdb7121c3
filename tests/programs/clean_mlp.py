"""A clean program (no NaN, no ∞): a tiny tf.function training loop plus eager ops. Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    tf.random.set_seed(0)
    w = tf.Variable(tf.random.normal([3, 1], stddev=0.1))
    x = tf.constant([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]])
    y = tf.constant([[1.0], [0.0]])

    @tf.function
    def train_step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        w.assign_sub(0.1 * tape.gradient(loss, w))
        return loss

    for _ in range(3):
        print(float(train_step()))
    print(float(tf.reduce_sum(tf.abs(w))))  # eager ops
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "FULL_HEALTH")

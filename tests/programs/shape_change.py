"""A shape that changes mid-run: batches of 8 rows, then a last partial batch of 5 through the same trace (the
input signature allows any batch size). Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    w = tf.constant([[0.5], [0.25], [1.0], [-0.5]])

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def predict(batch):
        logits = tf.matmul(batch, w, name="logits")  # SHAPE CHANGE: [8, 1] then [5, 1]
        return tf.reduce_mean(logits)

    for rows in (8, 8, 8, 8, 5):
        print(float(predict(tf.ones([rows, 4]))))
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "SHAPE")

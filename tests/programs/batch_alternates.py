"""A train/test loop whose batch size alternates: each epoch runs four training batches of 64 rows through one
tf.function, then one evaluation batch of 16 rows through the same trace (its input signature allows any batch
size), three epochs. Every output of the function changes shape twice an epoch: one finding per tensor naming the
sizes and how they alternate, not a shape-change alert per change. Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf

TRAIN_BATCH, EVAL_BATCH, TRAIN_BATCHES, EPOCHS = 64, 16, 4, 3


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    w = tf.constant([[0.5], [0.25], [1.0], [-0.5]])
    features = tf.reshape(tf.range(TRAIN_BATCH * TRAIN_BATCHES * 4, dtype=tf.float32), [-1, 4]) / 100.0
    train = tf.data.Dataset.from_tensor_slices(features).batch(TRAIN_BATCH)
    test = tf.data.Dataset.from_tensor_slices(features[:EVAL_BATCH]).batch(EVAL_BATCH)

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def predict(batch):
        scores = tf.matmul(batch, w, name="scores")  # BATCH ALTERNATES: [64, 1], then [16, 1] for evaluation
        return tf.reduce_mean(scores)

    for _ in range(EPOCHS):
        for batch in train:
            predict(batch)
        for batch in test:
            print(float(predict(batch)))
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "SHAPE")

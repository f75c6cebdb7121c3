"""The data carries the NaN: the third batch of a tf.data pipeline holds one (read from "a file" with a missing
value). The training step is finite on good batches. The line to fix is where the data is made (CULPRIT).
Args: DUMP_DIR [MODE]."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))
features = np.arange(24, dtype=np.float32).reshape(6, 4) / 10.0
features[5, 2] = np.nan  # a missing value in row 5 (batch 2, element [1, 2])
dataset = tf.data.Dataset.from_tensor_slices(features).batch(2)  # CULPRIT
w = tf.Variable(tf.ones([4, 1]))


@tf.function
def train_step(batch):
    pred = tf.matmul(batch, w)
    return tf.reduce_mean(pred * pred)


for batch in dataset:
    print(float(train_step(batch)))

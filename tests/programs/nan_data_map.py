"""A NaN born inside a tf.data map function (#38 item 3): the pipeline standardises each row by its own spread, and
one row is constant, so its spread is 0 and `(x - mean) / std` is 0/0. The producer is the map function's `truediv`
(its graph `Dataset_map_standardise` runs inside the dataset); the line to fix is that division (CULPRIT), and the
line that built the pipeline (DATASET) is context, not the fix.
Args: DUMP_DIR [VARIANT: fit (Keras `fit` on the dataset) | loop (`for batch in dataset` and a tf.function step)]."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], "FULL_HEALTH")
variant = _common.arg(2, "fit")
tf.keras.utils.set_random_seed(0)
rng = np.random.RandomState(0)
rows = rng.rand(8, 4).astype("float32")
rows[5] = 0.25  # a constant row (the 6th; in the third batch of two): its spread is 0
labels = rng.rand(8, 1).astype("float32")


def standardise(x, y):
    mean = tf.reduce_mean(x)
    std = tf.math.reduce_std(x)
    return (x - mean) / std, y  # CULPRIT


dataset = tf.data.Dataset.from_tensor_slices((rows, labels)).map(standardise).batch(2)  # DATASET
if variant == "fit":
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(dataset, epochs=1, verbose=0)
else:
    w = tf.Variable(tf.ones([4, 1]))

    @tf.function
    def train_step(batch):
        return tf.reduce_mean(tf.square(tf.matmul(batch, w)))

    for batch, _y in dataset:
        print(float(train_step(batch)))

"""Four lambdas in a tf.data pipeline built for two datasets (train and validation), as keras-io examples do (#38
item 9): eight `Dataset_map_lambda` graphs, each map function traced once per `.map()` call. Not a retrace: no
function was traced twice for the same call. A training step consumes both. Args: DUMP_DIR."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], "FULL_HEALTH")
rng = np.random.RandomState(0)


def pipeline(rows):
    ds = tf.data.Dataset.from_tensor_slices(rows)
    ds = ds.map(lambda x: tf.cast(x, tf.float32))
    ds = ds.map(lambda x: x / 255.0)
    ds = ds.map(lambda x: tf.reshape(x, [4]))
    ds = ds.map(lambda x: (x, tf.reduce_sum(x)))
    return ds.batch(4)


train = pipeline(rng.randint(0, 255, (16, 2, 2)))
val = pipeline(rng.randint(0, 255, (8, 2, 2)))
w = tf.Variable(tf.ones([4, 1]))


@tf.function
def step(x, y):
    return tf.reduce_mean(tf.square(tf.matmul(x, w)[:, 0] - y))


for x, y in train:
    step(x, y)
for x, y in val:
    step(x, y)

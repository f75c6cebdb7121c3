"""A tf.data pipeline with a map function (its graph runs inside the dataset, not as an execution)."""

import _common

tf = _common.enable(__import__("sys").argv[1], "FULL_HEALTH")
ds = tf.data.Dataset.range(6).map(lambda i: tf.cast(i, tf.float32) * 2.0 - 3.0).map(tf.math.log)
total = 0.0
for v in ds:
    total += float(v)

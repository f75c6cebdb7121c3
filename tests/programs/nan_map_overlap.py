"""A NaN born inside a parallel tf.data map (`num_parallel_calls=2`: two calls of the map function run at once, and
their traces interleave in the file in the threads' order). Each row is log-scaled, then square-rooted: row 4 holds a
value below 1, so its log is negative and the square root is NaN (born in `Sqrt`, CULPRIT); row 5 holds a negative
value, so its log is already NaN (born in `Log`, LOG) and its square root only carries it. Runs 4 and 5 of the map
run side by side: written in some orders, which `Log` trace a `Sqrt` read cannot be told (one finite, one NaN).
Args: DUMP_DIR [MODE] [ROW: the row below 1, 4 by default; the negative one follows it]."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))
rng = np.random.RandomState(0)
first = int(_common.arg(3, "4"))
rows = rng.rand(8, 3).astype("float32") + 2.0  # log > 0 everywhere but rows `first` and the next
rows[first, 1] = 0.5  # log 0.5 < 0: its square root is NaN
rows[first + 1, 2] = -1.0  # log -1 is NaN


def log_scale(x):
    logged = tf.math.log(x)  # LOG
    return tf.math.sqrt(logged)  # CULPRIT


dataset = tf.data.Dataset.from_tensor_slices(rows).map(log_scale, num_parallel_calls=2)  # DATASET
total = 0.0
for row in dataset:
    total += float(tf.reduce_sum(row))
print(total)

"""A NaN whose first trace in the file need not be its birth (#38 item 2). TensorFlow's debug ops run beside the
computation, not after it: with several inter-op threads, the trace of an `If` branch's input (the branch function's
`Placeholder`, holding the loss) and the branch's own ops can be written before the trace of the op that produced the
loss. Here a log of a value that goes negative makes the NaN; the loss is passed into a `tf.cond` (as a loss-scale
check or an "is finite" guard would be), whose branches read it, and wide independent work beside it keeps the
thread pool busy. The order TensorFlow writes on this host is not relied on (it need not vary from run to run): the
test (test_root_cause_wave4.py) puts this dump's trace rows in 20 random orders and checks the answer is the log in
every one, some of them with the branch's Placeholder first. The line to fix is the log's.

Args: DUMP_DIR [THREADS] [SEED]: inter_op_parallelism_threads (default 4) and the seed of the data.
"""

import sys

import _common
import numpy as np

threads = int(_common.arg(2, "4"))
seed = int(_common.arg(3, "0"))
import tensorflow as tf  # noqa: E402 - the thread pools are set before anything runs

tf.config.threading.set_inter_op_parallelism_threads(threads)
tf.config.threading.set_intra_op_parallelism_threads(2)
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
tf = _common.enable(sys.argv[1], "FULL_HEALTH")

rng = np.random.RandomState(seed)
x = tf.constant(rng.rand(2048, 256).astype("float32"))
w = tf.Variable(rng.rand(256, 512).astype("float32") - 0.5)
big = tf.constant(rng.rand(256, 256).astype("float32") / 256.0)


@tf.function
def step(x):
    with tf.device("/CPU:1"):  # the log and busy work beside it on one device, the rest of the step on the other
        z = tf.matmul(x, w)
        logs = tf.math.log(z)  # CULPRIT: z goes negative
        side = [tf.reduce_sum(tf.sin(tf.matmul(big, big * float(k)))) for k in range(16)]  # NaN-free
    loss = tf.reduce_mean(logs)
    scaled = tf.cond(loss > 0.0, lambda: loss * 2.0, lambda: loss - 1.0)
    return scaled + 0.0 * tf.add_n(side)


print(float(step(x)))

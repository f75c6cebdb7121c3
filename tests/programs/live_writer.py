"""A long streaming writer for the live-index test: circular_buffer_size=-1, many steps, written while read.

Args: DUMP_DIR [steps] [flush_every]. Each step runs a tf.function (graph execution traces) and two eager ops
(executions); every `flush_every` steps the writer is flushed so the reader sees the dump grow in pieces (TF
otherwise buffers until exit). The last tenth of the steps take the log of a negative number, so alerts appear
while the dump is being read. Writes DUMP_DIR/../finished when done.
"""

import os
import sys
import time

import _common

tf = _common.enable(sys.argv[1], "FULL_HEALTH", -1)
steps = int(_common.arg(2, "300"))
flush_every = int(_common.arg(3, "5"))


@tf.function
def step_fn(x, w, eps):
    y = tf.matmul(x, w, name="mm")
    z = tf.nn.relu(y, name="act")
    return tf.reduce_sum(tf.math.log(z + eps, name="logz"), name="total")


x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
w = tf.constant([[0.5, -0.25], [0.25, 0.5]])
for i in range(steps):
    eps = -1.0 if i >= steps - steps // 10 else 1e-3  # log of a negative: NaN
    step_fn(x, w, tf.constant(eps))
    w = w * 1.0001  # an eager op: one execution record per step
    if i % flush_every == flush_every - 1:
        _common.flush()
        time.sleep(0.01)
tf.debugging.experimental.disable_dump_debug_info()
open(os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), "finished"), "w").close()

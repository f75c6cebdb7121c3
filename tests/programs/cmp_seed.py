"""Compare pair: a weight initializer's seed changed (eager random ops), then a tf.function uses the weights.
Args: DUMP_DIR VARIANT [MODE]."""

import _common

B = _common.arg(2, "a") == "b"
tf = _common.enable(__import__("sys").argv[1], _common.arg(3, "FULL_TENSOR"))

init = tf.random.stateless_normal([3, 2], seed=[7, 2 if B else 1])  # INJECTED
w = tf.Variable(init)


@tf.function
def forward(x):
    return tf.reduce_sum(tf.nn.relu(tf.matmul(x, w, name="dense"), name="act"), name="total")


for i in range(2):
    forward(tf.constant([[1.0, -2.0, 0.5]]) * float(i + 1))

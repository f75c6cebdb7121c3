"""An eager GradientTape around a tf.function call: TF runs it as a __forward_* function whose Execution record
has an empty graph_id (the index joins it to its graph by wall time)."""

import _common

tf = _common.enable(__import__("sys").argv[1], "FULL_HEALTH")
w = tf.Variable([1.0, 2.0])


@tf.function
def model(x):
    return tf.reduce_sum(tf.math.log(w * x))


for step in range(2):
    with tf.GradientTape() as tape:
        loss = model(tf.constant([1.0, float(step)]))
    w.assign_sub(0.1 * tape.gradient(loss, w))

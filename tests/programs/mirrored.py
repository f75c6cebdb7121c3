"""MirroredStrategy over two logical CPUs: one train step replicated on both devices."""

import _common

tf = _common.enable(__import__("sys").argv[1], "FULL_HEALTH")
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    w = tf.Variable([[1.0], [2.0]])


@tf.function
def step(x):
    def replica(x):
        return tf.reduce_sum(tf.matmul(x, w))

    per = strategy.run(replica, args=(x,))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per, axis=None)


step(tf.constant([[1.0, 2.0]]))

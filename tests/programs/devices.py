"""Two logical CPUs, ops pinned with tf.device: in a tf.function (Square on CPU:0, then Sub and a Log that makes NaN
on CPU:1, then Mul back on CPU:0), called twice; then eagerly a Sqrt of a negative on CPU:1 (NaN) and an Exp on
CPU:0. Each op's device is known from the program, so tests can check the dump's placement against it."""

import _common

tf = _common.enable(__import__("sys").argv[1], "FULL_HEALTH")
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)


@tf.function
def step(x):
    with tf.device("/CPU:0"):
        squared = tf.math.square(x, name="square_on_cpu0")
    with tf.device("/CPU:1"):
        logged = tf.math.log(squared - 1.0, name="log_on_cpu1")  # log(0.25 - 1): NaN
    return logged * 2.0


x = tf.constant([0.5, 2.0])
for _ in range(2):
    step(x)
with tf.device("/CPU:1"):
    eager_nan = tf.math.sqrt(x - 1.0)  # sqrt(-0.5): NaN, made eagerly on CPU:1
with tf.device("/CPU:0"):
    eager_ok = tf.math.exp(x)

"""Keras `fit` under MirroredStrategy over two logical CPUs, a NaN born on one replica (#38 item 5): the model takes
the log of its features and sample 13 holds a negative one. Batches are 8 rows split in two shards of 4, so the
NaN is born in batch 1 (counting from 0, as the report does), on replica 1, whose shard is rows 4-7 of that
global batch (sample 13 is its row 1). The producer is the `Log` on `replica_1/`, inside `one_step_on_data`; its
input is the shard the distributed iterator handed replica 1 in that step. The line to fix is the log's (CULPRIT).
Args: DUMP_DIR [MODE]."""

import _common

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))
import numpy as np  # noqa: E402

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
tf.keras.utils.set_random_seed(0)
rng = np.random.RandomState(0)
features = rng.rand(32, 4).astype("float32") + 0.5
features[13, 2] = -1.0  # a negative feature: its log is NaN
labels = rng.rand(32, 1).astype("float32")


class LogFeatures(tf.keras.layers.Layer):
    def call(self, x):
        return tf.math.log(x)  # CULPRIT


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((4,)), LogFeatures(), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
model.fit(features, labels, epochs=1, batch_size=8, shuffle=False, verbose=0)

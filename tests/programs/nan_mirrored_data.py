"""Keras `fit` under MirroredStrategy over two logical CPUs, fed a NaN (#38 item 1 of the fourth round's last pass):
sample 13 of the training data holds a NaN. tf.data's pipeline gathers each batch from the arrays (`GatherV2` inside
tf.data's functions), and its trace can reach the file before the trace of the array it gathers from: file order is
not causal, and with the buffer off nothing was dropped. The line to fix is the one that built the data (CULPRIT).
Args: DUMP_DIR [MODE] [SHUFFLE: true | false | batch]."""

import _common

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))
shuffle = {"true": True, "false": False, "batch": "batch"}[_common.arg(3, "true")]
import numpy as np  # noqa: E402

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
tf.keras.utils.set_random_seed(0)
rng = np.random.RandomState(0)
features = rng.rand(32, 4).astype("float32")
features[13, 2] = np.nan  # CULPRIT
labels = rng.rand(32, 1).astype("float32")

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="relu"),
                                 tf.keras.layers.Dense(1)])  # fmt: skip
    model.compile(optimizer="sgd", loss="mse")
model.fit(features, labels, epochs=1, batch_size=8, shuffle=shuffle, verbose=0)  # FIT

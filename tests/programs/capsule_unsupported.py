"""fit with a NanCapsule where the capsule cannot watch: under CentralStorageStrategy on two logical CPU devices
(steps_per_execution=4 with jit_compile=True, the second case, is watched since #35's device stash: no error).
OUT/result.json holds the error set_model raised (type and message).

Args: OUT central_storage|steps_per_execution
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # noqa: E402
import numpy as np  # noqa: E402

from tensorboard_plugin_dbg.capsule import NanCapsule  # noqa: E402


def build(steps_per_execution):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    xla = steps_per_execution > 1
    model.compile(optimizer="sgd", loss="mse", steps_per_execution=steps_per_execution, jit_compile=xla)
    return model


def main():
    out, case = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    if case == "central_storage":
        with tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"]).scope():
            model = build(1)
    else:
        model = build(4)
    x, y = np.ones((32, 4), "float32"), np.ones((32, 1), "float32")
    result = {"error": None}
    try:
        model.fit(x, y, batch_size=8, verbose=0, callbacks=[NanCapsule(os.path.join(out, "capsules"))])
    except ValueError as e:
        result["error"] = {"type": type(e).__name__, "message": str(e)}
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    sys.exit(main())

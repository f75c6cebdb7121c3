"""A Keras regression trained with fit and NanCapsule(spike=10): one batch's targets are 1000 times too large (no
NaN anywhere), at a known step after the rule's 100 arming steps. Keeps its own copies of that step's batch and of
every variable before it (OUT/batch.npz, OUT/pre_step.npz), for the test to compare with the capsule.

Args: OUT [--poison-step K] [--rows 2,5] [--jit] [--on-nan stop|skip|raise] [--mirrored] [--grad] (--mirrored:
MirroredStrategy on two logical CPU devices, global batch 8: the spike is the global step's loss; --grad: the rule on
the global gradient norm, grad_spike=10, instead of the loss; --rows: only these rows of the batch get the 1000x
targets). Capsules go to OUT/capsules; OUT/result.json says how training ended.
"""

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import contextlib

import keras
import numpy as np
import tensorflow as tf

if "--mirrored" in sys.argv:  # before capsule_fit's import makes a variable (devices are set up once)
    tf.config.set_logical_device_configuration(
        tf.config.list_physical_devices("CPU")[0], [tf.config.LogicalDeviceConfiguration()] * 2
    )
from capsule_fit import KeepPreStep  # the program's own copies of every variable at the start of one step

from tensorboard_plugin_dbg.capsule import NanCapsule

BATCH, STEPS = 8, 130


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--poison-step", type=int, default=110)
    p.add_argument("--on-nan", default="stop")
    p.add_argument("--jit", action="store_true")
    p.add_argument("--mirrored", action="store_true")
    p.add_argument("--grad", action="store_true")
    p.add_argument("--rows", default="", help="rows of the poisoned batch whose targets are off (default: all)")
    args = p.parse_args()
    scope = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]).scope() if args.mirrored else contextlib.nullcontext()
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(BATCH * STEPS, 4)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5], [0.0]], "float32") + 0.1).astype("float32")
    rows = slice(args.poison_step * BATCH, (args.poison_step + 1) * BATCH)
    off = [args.poison_step * BATCH + int(r) for r in args.rows.split(",")] if args.rows else rows
    y[off] *= 1000.0  # CULPRIT: targets in the wrong unit
    np.savez(os.path.join(args.out, "batch.npz"), x=x[rows], y=y[rows])
    with scope:
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse", jit_compile=args.jit)
    rule = {"grad_spike": 10.0} if args.grad else {"spike": 10.0}
    capsule = NanCapsule(os.path.join(args.out, "capsules"), on_nan=args.on_nan, **rule)
    callbacks = [capsule, KeepPreStep(args.poison_step, args.out)]
    model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0, callbacks=callbacks)
    result = {"captured": capsule.captured, "steps": int(model.optimizer.iterations.numpy())}
    result["jit_compile"] = model.jit_compile
    with open(os.path.join(args.out, "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    sys.exit(main())

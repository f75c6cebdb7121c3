"""One worker of a two-worker tf.distribute.MultiWorkerMirroredStrategy custom loop on loopback, with the NanCapsule
helper: global batches of 8, rows 0..3 worker 0's and 4..7 worker 1's (each worker reads its own rows); one
poisoned row (a negative feature, whose log is NaN) on worker 1 at step --poison-step. Both workers write capsules
into OUT/capsules; this worker's result (steps run, optimizer iterations) and its variables at the end and at the
start of the poisoned step and of the next go to OUT/workerI/.

Args: OUT INDEX PORT0,PORT1 [--on-nan stop|skip] [--strategy-first] (as a cluster's launcher runs a program: the
cluster taken from TF_CONFIG in the environment, the strategy made before NanCapsule is imported)
"""

import argparse
import json
import os
import sys

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("index", type=int)
p.add_argument("ports")
p.add_argument("--on-nan", default="skip")
p.add_argument("--poison-step", type=int, default=3)
p.add_argument("--strategy-first", action="store_true")
args = p.parse_args()
workers = [f"127.0.0.1:{port}" for port in args.ports.split(",")]
if not args.strategy_first:
    cluster = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": args.index}}
    os.environ["TF_CONFIG"] = json.dumps(cluster)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

STRATEGY = tf.distribute.MultiWorkerMirroredStrategy() if args.strategy_first else None

from tensorboard_plugin_dbg.capsule import NanCapsule  # noqa: E402

GLOBAL, SAMPLES = 8, 48


def rows(x, index):
    """This worker's rows of every global batch, in order."""
    local = GLOBAL // 2
    return np.concatenate(
        [x[b * GLOBAL + index * local : b * GLOBAL + (index + 1) * local] for b in range(SAMPLES // GLOBAL)]
    )


def keep(name, model, optimizer, folder):
    arrays = {"w:" + v.path: v.numpy() for v in model.variables}
    arrays.update({"o:" + v.path: v.numpy() for v in optimizer.variables})
    np.savez(os.path.join(folder, name), **arrays)


def main():
    folder = os.path.join(args.out, f"worker{args.index}")
    os.makedirs(folder, exist_ok=True)
    strategy = STRATEGY if STRATEGY is not None else tf.distribute.MultiWorkerMirroredStrategy()
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(1)
    x = np.abs(rng.normal(size=(SAMPLES, 4))).astype("float32")
    y = rng.normal(size=(SAMPLES, 1)).astype("float32")
    x[args.poison_step * GLOBAL + 6, 1] = -3.0  # row 6 of the global batch: worker 1's
    mine = (rows(x, args.index), rows(y, args.index))
    np.savez(os.path.join(folder, "batch.npz"), x=mine[0][args.poison_step * 4 : args.poison_step * 4 + 4])
    with strategy.scope():
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1)])
        optimizer = keras.optimizers.SGD(0.01, momentum=0.9)
        optimizer.build(model.trainable_variables)
    capsule = NanCapsule(os.path.join(args.out, "capsules"), on_nan=args.on_nan)
    capsule.watch(model, optimizer)

    def replica_step(features, target):
        capsule.begin_step()
        with tf.GradientTape() as tape:
            logged = tf.math.log(features + 1.0)  # CULPRIT
            per_row = tf.square(model(logged, training=True) - target)
            loss = tf.nn.compute_average_loss(per_row, global_batch_size=GLOBAL)
        grads = tape.gradient(loss, model.trainable_variables)
        capsule.apply_gradients(grads, model.trainable_variables, loss=loss, batch=(features, target))

    @tf.function
    def train_step(features, target):
        strategy.run(replica_step, args=(features, target))

    dataset = strategy.distribute_datasets_from_function(
        lambda context: tf.data.Dataset.from_tensor_slices(mine).batch(GLOBAL // 2)
    )
    steps = 0
    for epoch in range(2):
        for features, target in capsule.batches(dataset, epoch=epoch):
            if steps in (args.poison_step, args.poison_step + 1):
                keep("pre_step.npz" if steps == args.poison_step else "post_step.npz", model, optimizer, folder)
            train_step(features, target)
            steps += 1
        if capsule.triggered and args.on_nan == "stop":
            break
    keep("final.npz", model, optimizer, folder)
    result = {"steps": steps, "iterations": int(optimizer.iterations.numpy()), "captured": capsule.captured}
    with open(os.path.join(folder, "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    sys.exit(main())

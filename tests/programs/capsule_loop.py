"""A custom training loop (a tf.function train step) with the NanCapsule helper: one poisoned sample (a negative
feature, whose log is NaN) at a known step. Keeps its own copies of that step's batch and of the variables before
it (OUT/batch.npz, OUT/pre_step.npz).

Args: OUT [--on-nan stop|skip|raise] [--poison-step K] [--eager] [--jit] (the step a tf.function with
jit_compile=True; result.json lists the op types of its graph). Capsules go to OUT/capsules; OUT/result.json says
how the loop ended.
"""

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras
import numpy as np
import tensorflow as tf

from tensorboard_plugin_dbg.capsule import NanCapsule, NanCapsuleError

BATCH, SAMPLES, POISONED_ROW = 8, 64, 5


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--on-nan", default="stop")
    p.add_argument("--poison-step", type=int, default=3)
    p.add_argument("--eager", action="store_true")
    p.add_argument("--jit", action="store_true")
    p.add_argument("--batchnorm", action="store_true", help="BatchNorm and Dropout: state the forward pass moves")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)
    capsule = NanCapsule(os.path.join(args.out, "capsules"), on_nan=args.on_nan)
    layers = [keras.Input((4,)), keras.layers.Dense(8, activation="tanh")]
    if args.batchnorm:
        layers += [keras.layers.BatchNormalization(), keras.layers.Dropout(0.2, seed=1)]
    model = keras.Sequential([*layers, keras.layers.Dense(1)])
    optimizer = keras.optimizers.SGD(0.01, momentum=0.9)
    capsule.watch(model, optimizer)

    def train_step(features, target):
        capsule.begin_step()  # the state before the forward pass
        with tf.GradientTape() as tape:
            logged = tf.math.log(features["raw"] + 1.0)  # CULPRIT
            loss = tf.reduce_mean(tf.square(model(logged, training=True) - target))
        grads = tape.gradient(loss, model.trainable_variables)
        capsule.apply_gradients(grads, model.trainable_variables, loss=loss, batch=(features, target))
        return loss

    step_fn = train_step if args.eager else tf.function(train_step, jit_compile=args.jit or None)
    rng = np.random.default_rng(1)
    x = np.abs(rng.normal(size=(SAMPLES, 4))).astype("float32")
    y = rng.normal(size=(SAMPLES, 1)).astype("float32")
    x[args.poison_step * BATCH + POISONED_ROW, 1] = -3.0
    rows = slice(args.poison_step * BATCH, (args.poison_step + 1) * BATCH)
    np.savez(os.path.join(args.out, "batch.npz"), **{"0/raw": x[rows], "1": y[rows]})
    dataset = tf.data.Dataset.from_tensor_slices(({"raw": x}, y)).batch(BATCH)
    result, steps = {"ended": "finished"}, 0
    try:
        for epoch in range(2):
            for features, target in capsule.batches(dataset, epoch=epoch):
                if steps == args.poison_step:
                    keep_pre_step(model, optimizer, args.out)
                step_fn(features, target)
                steps += 1
            if capsule.triggered and args.on_nan == "stop":
                break
    except NanCapsuleError as e:
        result = {"ended": "raised", "message": str(e)}
    result.update(captured=capsule.captured, iterations=int(optimizer.iterations.numpy()), steps=steps)
    if not args.eager:
        graph = step_fn.get_concrete_function(features, target).graph
        result["checks"] = check_ops(graph)
        library = graph.as_graph_def().library.function
        result["ops"] = sorted({n.op for f in library for n in f.node_def} | {op.type for op in graph.get_operations()})
    with open(os.path.join(args.out, "result.json"), "w") as f:
        json.dump(result, f)


def check_ops(graph):
    """The capsule's every-step cond in the traced step: its op type and whether TensorFlow may lower it to
    Switch/Merge (which would slow every op of the step)."""
    found = [op for op in graph.get_operations() if op.name.endswith("nan_capsule_check")]
    return [{"type": op.type, "lowered": bool(op.get_attr("_lower_using_switch_merge"))} for op in found]


def keep_pre_step(model, optimizer, out):
    if not optimizer.built:
        optimizer.build(model.trainable_variables)
    arrays = {"w:" + v.path: v.numpy() for v in model.variables}
    arrays.update({"o:" + v.path: v.numpy() for v in optimizer.variables})
    np.savez(os.path.join(out, "pre_step.npz"), **arrays)


if __name__ == "__main__":
    sys.exit(main())

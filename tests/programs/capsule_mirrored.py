"""A NanCapsule under tf.distribute.MirroredStrategy on two logical CPU devices: Keras fit (default) or a custom
loop (--loop: strategy.run around a tf.function step with the helper). One poisoned row (a negative feature, whose
sqrt is NaN) of the global batch at step --poison-step; with the global batch of 8 split in order, rows 4..7 are the
second replica's. The program keeps the global batch of that step (OUT/batch.npz) and every replica's copy of every
variable at the start of that step and of the next (OUT/pre_step.npz, OUT/post_step.npz: "w:PATH:REPLICA").

Args: OUT [--loop] [--on-nan stop|skip|raise] [--poison-step K] [--poison-row R] [--samples N] [--clean]
[--one-device] (MirroredStrategy on one logical device: a machine without the run's devices, for replay)
[--adamw] (fit: AdamW with weight decay, whose decay is one more write per variable the capsule holds back)
[--loss-nan] (the poisoned row's target is NaN, in a loss term no gradient reaches: the loss alone goes non-finite)
[--no-capsule] (the same training without the capsule: the weights a finite run must end with, bit for bit)
[--whole-batch] (--loop: the batch handed to strategy.run as plain tensors, so every replica gets all of it)
[--poison-also K] (the same row poisoned at step K too: skip mode's second trigger before the host reads the first)
[--clipvalue] (an optimizer clipping at 1e30: exact for these values, and the flags path, whose capture on the first
device holds every replica's values, the capsule as the per-device capture must write it)
Capsules go to OUT/capsules; OUT/result.json says how training ended (and the NanCapsule warnings it raised).
"""

import argparse
import json
import os
import sys
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf

DEVICES = 1 if "--one-device" in sys.argv else 2  # before anything runs: logical devices are set once
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * DEVICES)

import keras  # noqa: E402
import numpy as np  # noqa: E402

from tensorboard_plugin_dbg.capsule import NanCapsule, NanCapsuleError  # noqa: E402

BATCH = 8


class SqrtFeatures(keras.layers.Layer):
    def call(self, x):
        return tf.sqrt(x)  # CULPRIT


def build():
    inputs = keras.Input((5,))
    h = keras.layers.Dense(8, activation="relu")(SqrtFeatures()(inputs))
    return keras.Model(inputs, keras.layers.Dense(1)(h))


def loss_fn(y_true, y_pred):
    """--loss-nan: a NaN target makes its row's loss NaN through a term no gradient reaches (the gradients stay
    finite)."""
    clean = tf.where(tf.math.is_nan(y_true), tf.zeros_like(y_true), y_true)
    return tf.reduce_mean(tf.square(y_pred - clean), axis=-1) + tf.stop_gradient(y_true[:, 0]) * 0.0


def replica_values(model, optimizer):
    """Every replica's copy of every variable (a mirrored variable holds one per device)."""
    arrays = {}
    for prefix, variables in (("w:", model.variables), ("o:", optimizer.variables)):
        for v in variables:
            value = getattr(v, "value", v)
            for i, component in enumerate(getattr(value, "values", (value,))):
                arrays[f"{prefix}{v.path}:{i}"] = component.numpy()
    return arrays


class KeepReplicas(keras.callbacks.Callback):
    def __init__(self, step, out):
        super().__init__()
        self.step, self.out, self.seen = step, out, 0

    def on_train_batch_begin(self, batch, logs=None):
        keep(self.seen, self.step, self.model, self.model.optimizer, self.out)
        self.seen += 1


def keep(seen, step, model, optimizer, out):
    if seen in (step, step + 1):
        name = "pre_step.npz" if seen == step else "post_step.npz"
        np.savez(os.path.join(out, name), **replica_values(model, optimizer))


def data(args):
    rng = np.random.default_rng(0)
    x = np.abs(rng.normal(size=(args.samples, 5))).astype("float32")
    y = rng.normal(size=(args.samples, 1)).astype("float32")
    if args.loss_nan:
        y[args.poison_step * BATCH + args.poison_row, 0] = np.nan
    elif not args.clean:
        for step in (args.poison_step, *([args.poison_also] if args.poison_also is not None else [])):
            x[step * BATCH + args.poison_row, 2] = -1.0
    rows = slice(args.poison_step * BATCH, (args.poison_step + 1) * BATCH)
    np.savez(os.path.join(args.out, "batch.npz"), x=x[rows], y=y[rows])
    return x, y


def fit(args, strategy, capsule, x, y):
    with strategy.scope():
        model = build()
        adamw = keras.optimizers.AdamW(1e-3, weight_decay=0.1) if args.adamw else None
        adam = keras.optimizers.Adam(1e-3, clipvalue=args.clipvalue)
        model.compile(optimizer=adamw or adam, loss=loss_fn if args.loss_nan else "mse")
    callbacks = [capsule, KeepReplicas(args.poison_step, args.out)] if capsule else []
    model.fit(x, y, batch_size=BATCH, epochs=2, shuffle=False, verbose=0, callbacks=callbacks)
    return model, model.optimizer


def loop(args, strategy, capsule, x, y):
    with strategy.scope():
        model = build()
        optimizer = keras.optimizers.SGD(0.01, momentum=0.9, clipvalue=args.clipvalue)
        optimizer.build(model.trainable_variables)
    if capsule:
        capsule.watch(model, optimizer)

    def replica_step(features, target):
        if capsule:
            capsule.begin_step()
        with tf.GradientTape() as tape:
            predicted = model(features, training=True)
            per_row = loss_fn(target, predicted) if args.loss_nan else tf.square(predicted - target)
            loss = tf.nn.compute_average_loss(per_row, global_batch_size=BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        if not capsule:
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return
        capsule.apply_gradients(grads, model.trainable_variables, loss=loss, batch=(features, target))

    @tf.function
    def train_step(features, target):
        strategy.run(replica_step, args=(features, target))

    batches = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH)
    # --whole-batch: plain tensors to strategy.run, so every replica is handed the whole global batch
    dataset = batches if args.whole_batch else strategy.experimental_distribute_dataset(batches)
    steps = 0
    for epoch in range(2):
        for features, target in capsule.batches(dataset, epoch=epoch) if capsule else dataset:
            keep(steps, args.poison_step, model, optimizer, args.out)
            train_step(features, target)
            steps += 1
        if capsule and capsule.triggered and args.on_nan == "stop":
            break
    return model, optimizer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--loop", action="store_true")
    p.add_argument("--on-nan", default="stop")
    p.add_argument("--poison-step", type=int, default=3)
    p.add_argument("--poison-row", type=int, default=6)
    p.add_argument("--samples", type=int, default=64)
    p.add_argument("--clean", action="store_true")
    p.add_argument("--one-device", action="store_true")
    p.add_argument("--adamw", action="store_true")
    p.add_argument("--loss-nan", action="store_true")
    p.add_argument("--no-capsule", action="store_true")
    p.add_argument("--whole-batch", action="store_true")
    p.add_argument("--poison-also", type=int, default=None)
    p.add_argument("--clipvalue", action="store_const", const=1e30, default=None)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)
    strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(DEVICES)])
    capsule = None if args.no_capsule else NanCapsule(os.path.join(args.out, "capsules"), on_nan=args.on_nan)
    x, y = data(args)
    result = {"ended": "finished"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model, optimizer = (loop if args.loop else fit)(args, strategy, capsule, x, y)
        except NanCapsuleError as e:
            result = {"ended": "raised", "message": str(e)}
    result["warnings"] = [str(w.message) for w in caught if "NanCapsule" in str(w.message)]
    if result["ended"] == "finished":
        final = replica_values(model, optimizer)
        np.savez(os.path.join(args.out, "final.npz"), **final)
        result["iterations"] = int(optimizer.iterations.numpy())
        result["finite"] = all(np.isfinite(a).all() for a in final.values())
    if capsule:
        result.update(captured=capsule.captured, triggers=capsule.capsule.triggers)
        # the devices whose capture staged their own replica's values (capsule/replica_capture.py; 0: one capture)
        result["staged_devices"] = len(getattr(capsule.capsule.state, "staged", []))
    with open(os.path.join(args.out, "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    sys.exit(main())

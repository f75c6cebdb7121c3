"""A Keras fit under XLA on a tf.data pipeline whose batches change size after the first call (a generator: batches
of 4, 4, then 8), a NanCapsule watching: the capsule sizes its device buffers from the first call's batches, so the
later, larger batches do not fit them (capsule/stash.py). One poisoned sample (a negative feature, whose sqrt is NaN)
in step 3, a batch of 8. The program keeps that batch and every variable before the step (OUT/batch.npz,
OUT/pre_step.npz) for the test to compare with the capsule.

Args: OUT [--clean] [--no-capsule] [--shuffle] [--validation] [--numpy] [--skip]. --clean: no poison.
--no-capsule: fit without the NanCapsule. --shuffle: the pipeline shuffles its samples each epoch (seeded; with
--numpy, fit's own shuffle=True). --validation: fit with validation_data. --numpy: fit on the arrays, batch_size=8.
--skip: on_nan="skip", two capsules at most (the poisoned batch comes again in the second epoch). result.json: how
training ended, the capsules written, the warnings raised, and the ids of the samples the model trained on in each
step, in order (column 0 of x is the sample's id; a layer records it).
"""

import argparse
import json
import os
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras
import numpy as np
import tensorflow as tf

from tensorboard_plugin_dbg.capsule import NanCapsule

SIZES = [4, 4, 8, 8, 8, 4]  # one epoch's batches: the third is larger than the first call's
POISONED_STEP, POISONED_ROW = 3, 5
RECORD = 256  # rows the ids buffer holds


class SqrtFeatures(keras.layers.Layer):
    """sqrt of the features (column 0, the sample's id, excepted); in training, the ids it met recorded in order."""

    def build(self, shape):
        self.ids = self.add_weight(shape=(RECORD,), initializer="zeros", trainable=False, name="ids")
        self.seen = self.add_weight(shape=(), initializer="zeros", trainable=False, name="seen", dtype="int32")

    def call(self, x, training=None):
        if training:
            at = self.seen + tf.range(tf.shape(x)[0])
            self.ids.assign(tf.tensor_scatter_nd_update(self.ids, at[:, None], x[:, 0]))
            self.seen.assign_add(tf.shape(x)[0])
        return tf.concat([x[:, :1] * 0.0, tf.sqrt(x[:, 1:])], 1)  # CULPRIT


def samples(poison):
    rng = np.random.default_rng(0)
    x = np.abs(rng.normal(size=(sum(SIZES), 5))).astype("float32")
    x[:, 0] = np.arange(1, sum(SIZES) + 1)  # the sample's id, from 1 (0: not recorded)
    y = rng.normal(size=(sum(SIZES), 1)).astype("float32")
    if poison:
        x[sum(SIZES[:POISONED_STEP]) + POISONED_ROW, 2] = -1.0
    return x, y


def pipeline(x, y, shuffle):
    """Batches of SIZES from a generator (unknown batch size in the element spec), shuffled per epoch if asked."""

    def batches():
        order = np.arange(len(x))
        if shuffle:
            rng.shuffle(order)
        at = 0
        for size in SIZES:
            rows = order[at : at + size]
            at += size
            yield x[rows], y[rows]

    rng = np.random.default_rng(1)
    spec = (tf.TensorSpec((None, 5), tf.float32), tf.TensorSpec((None, 1), tf.float32))
    return tf.data.Dataset.from_generator(batches, output_signature=spec)


class KeepPreStep(keras.callbacks.Callback):
    def __init__(self, out):
        super().__init__()
        self.out, self.seen = out, 0

    def on_train_batch_begin(self, batch, logs=None):
        if self.seen == POISONED_STEP:
            arrays = {"w:" + v.path: v.numpy() for v in self.model.variables}
            arrays.update({"o:" + v.path: v.numpy() for v in self.model.optimizer.variables})
            np.savez(os.path.join(self.out, "pre_step.npz"), **arrays)
        self.seen += 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    for flag in ("clean", "no-capsule", "shuffle", "validation", "numpy", "skip"):
        p.add_argument("--" + flag, action="store_true")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)
    inputs = keras.Input((5,))
    sqrt = SqrtFeatures()
    h = keras.layers.Dense(8, activation="relu")(sqrt(inputs))
    model = keras.Model(inputs, keras.layers.Dense(1)(h))
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", jit_compile=True)
    x, y = samples(not args.clean)
    rows = slice(sum(SIZES[:POISONED_STEP]), sum(SIZES[: POISONED_STEP + 1]))
    np.savez(os.path.join(args.out, "batch.npz"), x=x[rows], y=y[rows])
    callbacks = [KeepPreStep(args.out)]
    capsule = None
    if not args.no_capsule:
        skip = dict(on_nan="skip", max_capsules=2) if args.skip else {}
        capsule = NanCapsule(os.path.join(args.out, "capsules"), **skip)
        callbacks.insert(0, capsule)
    validation = pipeline(*samples(False), False) if args.validation else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dict(epochs=2, verbose=0, callbacks=callbacks, validation_data=validation)
        if args.numpy:
            model.fit(x, y, batch_size=8, shuffle=args.shuffle, **fit)
        else:
            model.fit(pipeline(x, y, args.shuffle), **fit)
    ids = sqrt.ids.numpy()[: int(sqrt.seen.numpy())].astype(int).tolist()
    result = {
        "captured": capsule.captured if capsule else [],
        "steps": int(model.optimizer.iterations.numpy()),
        "warnings": [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)],
        "ids": ids,
    }
    with open(os.path.join(args.out, "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()

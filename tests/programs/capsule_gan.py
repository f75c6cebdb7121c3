"""A small GAN trained with fit whose own train_step applies two optimizers of its own (the Keras guide's pattern:
`compile()` without an optimizer, `self.d_optimizer` and `self.g_optimizer` applied with apply_gradients), one real
sample poisoned with a NaN at a known step. The program keeps its own copies of that step's batch and of every model
and optimizer variable before that step, for the test to compare with the capsule.

Args: OUT [--poison-step K] [--jit] [--hidden] [--mirrored] (--jit: the train step XLA-compiled; --hidden: the two
optimizers live outside the model, where the capsule cannot see them: result.json holds the warnings fit raised;
--mirrored: under MirroredStrategy on two logical CPU devices, each replica 4 of the batch's 8 rows).
OUT/result.json: the capsules, each optimizer's iterations, whether every weight is finite after fit. Under `replay`
(the step re-run, then the program ended inside fit) the program keeps every model and optimizer variable as the
replay left them in OUT/replayed.npz, at its exit.
"""

import argparse
import atexit
import json
import os
import sys
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras
import numpy as np
import tensorflow as tf

from tensorboard_plugin_dbg.capsule import NanCapsule

BATCH, SAMPLES, POISONED_ROW, LATENT, FEATURES = 8, 96, 3, 4, 6
HIDDEN = {}  # --hidden: the optimizers, out of the capsule's sight


class GAN(keras.Model):
    def __init__(self, hidden, jit):
        super().__init__()
        self.jit = jit
        self.discriminator = keras.Sequential(
            [keras.Input((FEATURES,)), keras.layers.Dense(8, "relu"), keras.layers.Dense(1)]
        )
        self.generator = keras.Sequential(
            [keras.Input((LATENT,)), keras.layers.Dense(8, "relu"), keras.layers.Dense(FEATURES)]
        )
        self.hidden = hidden
        self.loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    def compile(self, d_optimizer, g_optimizer):
        super().compile(jit_compile=self.jit)
        if self.hidden:
            HIDDEN.update(d=d_optimizer, g=g_optimizer)
        else:
            self.d_optimizer, self.g_optimizer = d_optimizer, g_optimizer

    def optimizers(self):
        return (HIDDEN["d"], HIDDEN["g"]) if self.hidden else (self.d_optimizer, self.g_optimizer)

    def train_step(self, real):
        real = real[0] if isinstance(real, tuple) else real
        d_optimizer, g_optimizer = self.optimizers()
        noise = tf.random.normal((tf.shape(real)[0], LATENT), seed=1)
        fake = self.generator(noise)
        both = tf.concat([fake, real], axis=0)  # CULPRIT: the real samples enter the step here
        labels = tf.concat([tf.ones((tf.shape(real)[0], 1)), tf.zeros((tf.shape(real)[0], 1))], axis=0)
        with tf.GradientTape() as tape:
            d_loss = self.loss_fn(labels, self.discriminator(both))
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
        with tf.GradientTape() as tape:
            g_loss = self.loss_fn(tf.zeros((tf.shape(real)[0], 1)), self.discriminator(self.generator(noise)))
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
        return {"d_loss": d_loss, "g_loss": g_loss}


def in_sync(variable):
    """Every replica's copy of the variable bit-equal (one copy without a strategy)."""
    copies = [c.numpy().tobytes() for c in getattr(getattr(variable, "value", variable), "values", [variable])]
    return len(set(copies)) == 1


def keep_state(gan, path):
    """Every model variable ("w:" + path) and both optimizers' ("d:" / "g:" + path) into PATH."""
    arrays = {"w:" + v.path: v.numpy() for v in gan.variables}
    for name, optimizer in zip("dg", gan.optimizers()):
        arrays.update({f"{name}:{v.path}": v.numpy() for v in optimizer.variables})
    np.savez(path, **arrays)


class KeepPreStep(keras.callbacks.Callback):
    """The program's own copies of every model variable and both optimizers' at the start of the poisoned step."""

    def __init__(self, step, out):
        super().__init__()
        self.step, self.out, self.seen = step, out, 0

    def on_train_batch_begin(self, batch, logs=None):
        if self.seen == self.step:
            keep_state(self.model, os.path.join(self.out, "pre_step.npz"))
        self.seen += 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--poison-step", type=int, default=4)
    p.add_argument("--hidden", action="store_true")
    p.add_argument("--jit", action="store_true")
    p.add_argument("--mirrored", action="store_true")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)
    strategy = tf.distribute.get_strategy()  # the default: none
    if args.mirrored:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    x = np.random.default_rng(0).normal(size=(SAMPLES, FEATURES)).astype("float32")
    x[args.poison_step * BATCH + POISONED_ROW, 2] = np.nan
    rows = slice(args.poison_step * BATCH, (args.poison_step + 1) * BATCH)
    np.savez(os.path.join(args.out, "batch.npz"), x=x[rows])
    with strategy.scope():
        gan = GAN(args.hidden, args.jit)
        gan.compile(keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3))
        if args.mirrored:  # fit would build the GAN by call(), which it lacks; the optimizers in the strategy's scope
            gan.built = True
            for optimizer, model in zip(gan.optimizers(), (gan.discriminator, gan.generator)):
                optimizer.build(model.trainable_variables)
    capsule = NanCapsule(os.path.join(args.out, "capsules"))
    if os.environ.get("TBDBG_CAPSULE_REPLAY"):  # the replay ends the program inside fit
        atexit.register(keep_state, gan, os.path.join(args.out, "replayed.npz"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gan.fit(
            x,
            batch_size=BATCH,
            epochs=2,
            shuffle=False,
            verbose=0,
            callbacks=[capsule, KeepPreStep(args.poison_step, args.out)],
        )
    d, g = gan.optimizers()
    finite = all(bool(np.isfinite(v.numpy()).all()) for v in gan.variables)
    result = {
        "captured": capsule.captured,
        "iterations": [int(d.iterations.numpy()), int(g.iterations.numpy())],
        "finite": finite,
        "jit_compile": gan.jit_compile,
        "warnings": [str(w.message) for w in caught if "NanCapsule" in str(w.message)],
        "in_sync": all(in_sync(v) for v in [*gan.variables, *d.variables, *g.variables]),
    }
    with open(os.path.join(args.out, "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    sys.exit(main())

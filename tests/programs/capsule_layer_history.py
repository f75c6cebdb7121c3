"""A Keras program whose one layer's gradient grows for a few steps before a NaN (#36, per-layer history): the layer
`dense_3` multiplies its kernel's gradient by a factor (forward unchanged, no other gradient touched) that a callback
raises GROWTH-fold each step for LEAD steps; then batch TRIGGER holds a NaN. The NanCapsule's per-layer history must
name dense_3/kernel first out of band, LEAD steps before the trigger.

Args: OUT [--xla]. Capsules go to OUT/capsules; OUT/result.json holds the capsule and (--xla) whether the watched
train step still compiles with XLA and its ops.
"""

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras
import numpy as np
import tensorflow as tf

from tensorboard_plugin_dbg.capsule import NanCapsule

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capsule_fit import GraphOps  # noqa: E402 - a sibling program: the watched train step's ops

BATCH, STEPS, FEATURES = 8, 40, 5
TRIGGER, LEAD, GROWTH = 37, 4, 50.0


@tf.custom_gradient
def amplified(kernel, factor):
    def grad(dy):
        return dy * factor, tf.zeros_like(factor)

    return tf.identity(kernel), grad


class GrowingDense(keras.layers.Dense):
    """A Dense layer whose kernel's gradient is `factor` times the true one."""

    def build(self, input_shape):
        super().build(input_shape)
        self.factor = self.add_weight(shape=(), initializer="ones", trainable=False, name="factor")

    def call(self, inputs):
        return self.activation(tf.matmul(inputs, amplified(self.kernel.value, self.factor.value)) + self.bias.value)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--xla", action="store_true")
    args = p.parse_args()
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(STEPS * BATCH, FEATURES)).astype("float32")
    y = rng.normal(size=(STEPS * BATCH, 1)).astype("float32")
    x[TRIGGER * BATCH + 2, 1] = np.nan
    layers = [keras.layers.Dense(16, "relu", name="dense_1"), keras.layers.Dense(16, "relu", name="dense_2")]
    growing = GrowingDense(16, "relu", name="dense_3")
    model = keras.Sequential([keras.Input((FEATURES,)), *layers, growing, keras.layers.Dense(1, name="dense_4")])
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", jit_compile=args.xla)

    def grow(batch, logs):  # the LEAD steps before the trigger: GROWTH, GROWTH^2, ... times the gradient
        ahead = TRIGGER - batch
        growing.factor.assign(GROWTH ** (LEAD + 1 - ahead) if 0 < ahead <= LEAD else 1.0)

    schedule = keras.callbacks.LambdaCallback(on_train_batch_begin=grow)
    capsule = NanCapsule(os.path.join(args.out, "capsules"))
    graph = GraphOps(x[:BATCH], y[:BATCH])
    callbacks = [schedule, capsule] + ([graph] if args.xla else [])
    model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0, callbacks=callbacks)
    result = {"captured": capsule.captured, "jit_compile": model.jit_compile, "graph": graph.ops}
    with open(os.path.join(args.out, "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    sys.exit(main())

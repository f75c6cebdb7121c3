"""A Keras regression trained with fit and NanCapsule(spike=10) whose loss spike comes from the code, not the data:
a layer multiplies its input by a gain that a callback turns from 1 to 1e4 at one step (after the rule's 100 arming
steps); every batch is clean. The replay's spike cause must name the multiply's line, never the batch.

Args: OUT [--boost-step K] [--exp] (--exp: the layer takes exp(x * gain) and the gain turns to 20: the exp's
output outgrows its input, the line to name is the exp's). Capsules go to OUT/capsules; OUT/result.json says how
training ended.
"""

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras
import numpy as np

from tensorboard_plugin_dbg.capsule import NanCapsule

BATCH, STEPS = 8, 130


class Gain(keras.layers.Layer):
    """Multiplies by a non-trainable gain (a model variable: the capsule holds it, the replay restores it)."""

    def build(self, input_shape):
        self.gain = self.add_weight(shape=(), initializer="ones", trainable=False, name="gain")

    def call(self, x):
        return x * self.gain  # CULPRIT: the gain is 1e4 at the boosted step


class ExpGain(Gain):
    """exp(x * gain): a gain of 20 on a tanh activation makes exp's output ~5e8."""

    def call(self, x):
        h = x * self.gain
        return keras.ops.exp(h)  # CULPRIT: exp of a large activation


class Boost(keras.callbacks.Callback):
    def __init__(self, step, layer, value):
        super().__init__()
        self.step, self.layer, self.value, self.seen = step, layer, value, 0

    def on_train_batch_begin(self, batch, logs=None):
        if self.seen == self.step:
            self.layer.gain.assign(self.value)
        self.seen += 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--boost-step", type=int, default=110)
    p.add_argument("--exp", action="store_true")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(BATCH * STEPS, 4)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5], [0.0]], "float32") + 0.1).astype("float32")
    gain = ExpGain() if args.exp else Gain()
    model = keras.Sequential(
        [keras.Input((4,)), keras.layers.Dense(16, activation="tanh"), gain, keras.layers.Dense(1)]
    )
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    capsule = NanCapsule(os.path.join(args.out, "capsules"), spike=10.0)
    model.fit(
        x,
        y,
        batch_size=BATCH,
        epochs=1,
        shuffle=False,
        verbose=0,
        callbacks=[capsule, Boost(args.boost_step, gain, 20.0 if args.exp else 1e4)],
    )
    with open(os.path.join(args.out, "result.json"), "w") as f:
        json.dump({"captured": capsule.captured, "steps": int(model.optimizer.iterations.numpy())}, f)


if __name__ == "__main__":
    sys.exit(main())

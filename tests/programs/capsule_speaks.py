"""A Keras program trained with fit and a NanCapsule, for a capsule that speaks for itself (#36): one bad value in
one batch at a known place (epoch EPOCH, batch BATCH_AT, sample ROW, feature COL; shuffle off, so the row of the
array is known).

Args: OUT --case data-nan|log|spike [--jit] (--jit: fit XLA-compiled, whose step hands its batch back to the host:
the previous step's batch is kept there too)
- data-nan: x[ROW, COL] of that batch is NaN and the model's first op (Dense's MatMul) reads it: the NaN came with
  the data, no line of the program made it;
- log: the model takes log(x) on strictly positive features, and x[ROW, COL] of that batch is -2.0 (finite): a
  code bug met by one bad record;
- spike: targets y of rows SPIKED of that batch are 1e20: their squared error overflows float32, the loss is inf.
Capsules go to OUT/capsules; OUT/result.json holds where the bad value was put.
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

BATCH, SAMPLES, FEATURES = 8, 64, 5
EPOCH, BATCH_AT, ROW, COL = 1, 3, 5, 3
BAD_VALUE = -2.0
SPIKED = (2, 6)


class LogFeatures(keras.layers.Layer):
    def call(self, x):
        return tf.math.log(x)  # CULPRIT


def build(case, jit=False):
    inputs = keras.Input((FEATURES,))
    h = LogFeatures()(inputs) if case == "log" else inputs
    h = keras.layers.Dense(16, activation="relu")(h)
    model = keras.Model(inputs, keras.layers.Dense(1)(h))
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", jit_compile=jit)
    return model


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--case", choices=("data-nan", "log", "spike"), default="data-nan")
    p.add_argument("--jit", action="store_true")
    p.add_argument("--previous", action="store_true", help="NanCapsule(previous_batch=True)")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = (np.abs(rng.normal(size=(SAMPLES, FEATURES))) + 0.1).astype("float32")
    y = rng.normal(size=(SAMPLES, 1)).astype("float32")
    if args.case == "spike":
        y[[BATCH_AT * BATCH + row for row in SPIKED]] = 1e20
    else:
        x[BATCH_AT * BATCH + ROW, COL] = np.nan if args.case == "data-nan" else BAD_VALUE
    model = build(args.case, args.jit)
    capsule = NanCapsule(os.path.join(args.out, "capsules"), **({"previous_batch": True} if args.previous else {}))
    # EPOCH clean epochs first, then the poisoned one: the bad batch is batch BATCH_AT of epoch EPOCH
    fit = dict(batch_size=BATCH, shuffle=False, verbose=0, callbacks=[capsule])
    model.fit(np.nan_to_num(np.abs(x), nan=1.0), np.clip(y, -3, 3), epochs=EPOCH, **fit)
    history = model.fit(x, y, epochs=EPOCH + 1, initial_epoch=EPOCH, **fit)
    result = {"step": EPOCH * SAMPLES // BATCH + BATCH_AT, "row": ROW, "col": COL, "captured": capsule.captured}
    result["history"] = getattr(history, "nan_capsules", None)  # what the capture said, kept on the History
    with open(os.path.join(args.out, "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    sys.exit(main())

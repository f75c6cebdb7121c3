"""Keras 3 on JAX (KERAS_BACKEND=jax) trained with fit and a NanCapsule, one bad batch at a known step.

Args: OUT [--bug nan-input|log|log-negative|loss-log] [--on-nan stop|skip|raise] [--poison-step K] [--epochs N]
[--fit-per-epoch] (one fit call per epoch with the same callbacks; result.json: how many distinct train functions
they ran)
[--no-tensorflow] (importing TensorFlow fails, as on a JAX machine without it; result.json: whether it was loaded)
--bug nan-input: the batch of step K carries a NaN in x[5, 3] (the data, not the code); --bug log: row 5 of that
batch is finite but has a zero feature, and the custom layer's `keras.ops.log` turns it into -inf (the code);
--bug log-negative: row 5's x[5, 3] is -2.0 and the first layer takes `keras.ops.log` of the batch itself (the code);
--bug loss-log: the targets are positive but row 5's is 0, and the custom loss takes its `keras.ops.log` (the code).
The program keeps its own copies of that step's batch and of every variable before the step (OUT/expected.npz), and
OUT/result.json says how training ended (epochs run, steps applied, whether the final weights are finite).
"""

import argparse
import json
import os
import sys

if "--no-tensorflow" in sys.argv:
    sys.modules["tensorflow"] = None  # importing it raises ImportError
os.environ["KERAS_BACKEND"] = "jax"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import keras
import numpy as np

from tensorboard_plugin_dbg.capsule import NanCapsule, NanCapsuleError

BATCH, SAMPLES, ROW, COLUMN = 8, 96, 5, 3


class LogFeatures(keras.layers.Layer):
    def call(self, x):
        return keras.ops.log(x + 1.0)  # CULPRIT


class LogInputs(keras.layers.Layer):
    def call(self, x):
        return keras.ops.log(x)  # RAW CULPRIT


def log_error(y, p):
    return keras.ops.mean(keras.ops.square(keras.ops.log(y) - p))  # LOSS CULPRIT


class KeepPreStep(keras.callbacks.Callback):
    """Every variable as the poisoned step begins (Keras on JAX keeps the state outside the variables mid-epoch:
    synced first, Keras's own way for a callback); and the train function each fit call runs."""

    def __init__(self, step, out, batch):
        super().__init__()
        self.step, self.out, self.batch, self.seen, self.functions = step, out, batch, 0, []

    def on_train_begin(self, logs=None):
        self.functions.append(self.model.train_function)

    def on_train_batch_begin(self, batch, logs=None):
        if self.seen == self.step:
            self.model.jax_state_sync()
            arrays = {"w:" + v.path: v.numpy() for v in self.model.variables}
            arrays.update({"o:" + v.path: v.numpy() for v in self.model.optimizer.variables})
            np.savez(os.path.join(self.out, "expected.npz"), x=self.batch[0], y=self.batch[1], **arrays)
        self.seen += 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--bug", default="nan-input", choices=("nan-input", "log", "log-negative", "loss-log"))
    parser.add_argument("--on-nan", default="stop")
    parser.add_argument("--poison-step", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=1)
    for flag in ("--fit-per-epoch", "--no-tensorflow"):
        parser.add_argument(flag, action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 2.0, (SAMPLES, 6)).astype(np.float32)
    y = rng.normal(size=(SAMPLES, 1)).astype(np.float32)
    row = args.poison_step * BATCH + ROW
    if args.bug == "nan-input":
        x[row, COLUMN] = np.nan
    elif args.bug == "log":
        x[row, COLUMN] = -1.0  # finite data; log(x + 1) of it is -inf
    elif args.bug == "log-negative":
        x[row, COLUMN] = -2.0  # finite data; log of it is NaN
    else:
        y = rng.uniform(0.5, 2.0, (SAMPLES, 1)).astype(np.float32)
        y[row, 0] = 0.0  # a finite target; the loss's log of it is -inf

    model = keras.Sequential(
        [
            keras.Input((6,)),
            LogInputs() if args.bug == "log-negative" else LogFeatures(),
            keras.layers.Dense(16, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=log_error if args.bug == "loss-log" else "mse")
    step = slice(args.poison_step * BATCH, (args.poison_step + 1) * BATCH)
    capsule = NanCapsule(os.path.join(args.out, "capsules"), on_nan=args.on_nan, check_every=4)
    keep = KeepPreStep(args.poison_step, args.out, (x[step], y[step]))
    raised = None
    fits = [1] * args.epochs if args.fit_per_epoch else [args.epochs]
    try:
        epochs_run = 0
        for epochs in fits:
            callbacks = [keep, capsule]
            history = model.fit(x, y, batch_size=BATCH, epochs=epochs, shuffle=False, verbose=0, callbacks=callbacks)
            epochs_run += len(history.history.get("loss", []))
    except NanCapsuleError as e:
        raised, epochs_run = str(e), None
    finite = all(bool(np.all(np.isfinite(v.numpy()))) for v in model.variables)
    result = {
        "captured": capsule.captured,
        "epochs_run": epochs_run,
        "iterations": int(model.optimizer.iterations.numpy()),
        "weights_finite": finite,
        "raised": raised,
        "backend": keras.backend.backend(),
        "host_reads": capsule.capsule.host_reads,
        "tensorflow_loaded": sys.modules.get("tensorflow") is not None,
        "steps": args.epochs * SAMPLES // BATCH,
        "train_functions": len({id(f) for f in keep.functions if f is not None}),
    }
    with open(os.path.join(args.out, "result.json"), "w") as f:
        json.dump(result, f)
    print(json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    main()

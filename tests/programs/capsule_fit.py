"""A Keras program trained with fit and a NanCapsule: one poisoned sample (a negative feature, whose sqrt is NaN)
at a known step. The program keeps its own copies of that step's batch and of every model and optimizer variable
before that step (OUT/expected.npz), for the test to compare with the capsule.

Args: OUT [--on-nan stop|skip|raise] [--poison-step K] [--dict] [--sample-weight] [--mixed] [--clean]
[--random-poison] [--nested] [--nan-input] [--jit] [--steps-per-execution N] [--fit-per-epoch] (one fit call per
epoch with the same callbacks, the first on clean data: the poisoned step is --poison-step of the second epoch; then
a fit without the NanCapsule, one with it, a compile and one with it again, all on clean data; result.json lists
which train function each fit call ran, as the index of its first appearance). --jit: compiled with jit_compile=True
(result.json: model.jit_compile after fit, the host reads the capsule made, and the ops of the watched train
function's graph). --steps-per-execution N: compiled with it (callbacks see one batch begin per N steps:
OUT/after.npz holds the trainable and optimizer variables after fit, which in stop mode are the trigger step's
pre-step values). Capsules go to OUT/capsules; OUT/result.json says how training ended.
--checkpoint F: a ModelCheckpoint saving every F batches (or `epoch`) into OUT/ckpt (result.json: whether each
checkpoint holds finite variables only, and the model after fit). --bn-first: a BatchNormalization right after the
sqrt (its statistics meet the NaN). --samples N: N samples (not a multiple of 8: the epoch's last batch is shorter).
--previous-batch: NanCapsule(previous_batch=True), the batch before the trigger's kept too.
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

BATCH, SAMPLES, POISONED_ROW = 8, 96, 3


class SqrtFeatures(keras.layers.Layer):
    def call(self, x):
        return tf.sqrt(x)  # CULPRIT


class TrainFunctions(keras.callbacks.Callback):
    """The train function each fit call runs (fit makes it before on_train_begin): the objects, kept alive."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def on_train_begin(self, logs=None):
        self.seen.append(self.model.train_function)


class GraphOps(keras.callbacks.Callback):
    """After the first step, while the NanCapsule is installed: the ops of the train function fit runs."""

    def __init__(self, x, y):
        super().__init__()
        self.x, self.y, self.ops = x, y, None

    def on_train_batch_end(self, batch, logs=None):
        if self.ops is None:
            self.ops = graph_ops(self.model.train_function, self.x, self.y)


class KeepPreStep(keras.callbacks.Callback):
    """The program's own copies of every variable at the start of the poisoned step, and (skip mode, a plain x) each
    sample's loss of that step's batch with those weights (OUT/per_sample_loss.npy: the forward pass the capsule's
    forensics makes, training=False)."""

    def __init__(self, step, out, batch=None):
        super().__init__()
        self.step, self.out, self.seen, self.batch = step, out, 0, batch

    def on_train_batch_begin(self, batch, logs=None):
        if self.seen == self.step:
            arrays = {"w:" + v.path: v.numpy() for v in self.model.variables}
            arrays.update({"o:" + v.path: v.numpy() for v in self.model.optimizer.variables})
            np.savez(os.path.join(self.out, "pre_step.npz"), **arrays)
            if self.batch is not None:
                x, y = self.batch
                loss = keras.losses.mean_squared_error(y, self.model(x, training=False))
                np.save(os.path.join(self.out, "per_sample_loss.npy"), np.asarray(loss, dtype=np.float64))
        self.seen += 1


def build(args):
    inputs = {"a": keras.Input((3,), name="a"), "b": keras.Input((2,), name="b")} if args.dict else keras.Input((5,))
    features = keras.layers.Concatenate()([inputs["a"], inputs["b"]]) if args.dict else inputs
    h = SqrtFeatures()(features)
    if args.bn_first:  # statistics of the NaN itself (the ReLU below turns a NaN into 0 on CPU)
        h = keras.layers.BatchNormalization()(h)
    h = keras.layers.Dense(16, activation="relu")(h)
    h = keras.layers.Dropout(0.25)(h)
    h = keras.layers.BatchNormalization()(h)
    model = keras.Model(inputs, keras.layers.Dense(1, dtype="float32")(h))
    optimizer = keras.optimizers.Adam(1e-3)
    if args.mixed:  # a scale so large that the first steps overflow on purpose (the LossScaleOptimizer skips them)
        optimizer = keras.optimizers.LossScaleOptimizer(optimizer, initial_scale=2.0**40)
    model.compile(optimizer=optimizer, loss="mse", jit_compile=args.jit, steps_per_execution=args.steps_per_execution)
    return model


def data(args):
    rng = np.random.default_rng(0)
    x = np.abs(rng.normal(size=(SAMPLES, 5))).astype("float32")
    y = rng.normal(size=(SAMPLES, 1)).astype("float32")
    if not args.clean:
        x[args.poison_step * BATCH + POISONED_ROW, 2] = -1.0
    if args.nan_input:  # the data itself carries the NaN
        x[args.poison_step * BATCH + POISONED_ROW, 2] = np.nan
    if args.random_poison:  # the NaN depends on a draw the capsule does not hold: a replay cannot reproduce it
        x[args.poison_step * BATCH + POISONED_ROW, 2] = 1.0
    inputs = {"a": x[:, :3], "b": x[:, 3:]} if args.dict else x
    weights = np.linspace(0.5, 1.5, SAMPLES).astype("float32") if args.sample_weight else None
    return inputs, y, weights


CALLS = tf.Variable(0, trainable=False)  # a counter outside the model and optimizer: the capsule does not hold it


class RandomPoison(keras.layers.Layer):
    """Makes the input negative at one call of the program's run: state that the capsule cannot restore."""

    def __init__(self, step, **kwargs):
        super().__init__(**kwargs)
        self.step = step

    def call(self, x):
        CALLS.assign_add(1)
        return tf.where(tf.equal(CALLS, self.step + 1), -x, x)


def main():
    global SAMPLES
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--on-nan", default="stop")
    p.add_argument("--poison-step", type=int, default=4)
    p.add_argument("--tfdbg-buffer", type=int, default=0)
    p.add_argument("--steps-per-execution", type=int, default=1)
    p.add_argument("--samples", type=int, default=SAMPLES, help="not a multiple of 8: the epoch's last batch shorter")
    p.add_argument("--checkpoint", default="", help="ModelCheckpoint's save_freq: a number of batches, or epoch")
    flags = ("dict", "sample-weight", "mixed", "clean", "random-poison", "nested", "nan-input", "fit-per-epoch", "jit")
    flags += ("bn-first", "previous-batch")
    for flag in flags:
        p.add_argument("--" + flag, action="store_true")
    args = p.parse_args()
    SAMPLES = args.samples
    os.makedirs(args.out, exist_ok=True)
    if args.mixed:
        keras.mixed_precision.set_global_policy("mixed_float16")
    keras.utils.set_random_seed(0)
    options = dict(on_nan=args.on_nan, tfdbg_buffer=args.tfdbg_buffer, previous_batch=args.previous_batch)
    capsule = NanCapsule(os.path.join(args.out, "capsules"), **options)
    model = build(args)
    x, y, sample_weight = data(args)
    if args.random_poison:
        inputs = keras.Input((5,))
        model = _wrapped(model, inputs, RandomPoison(args.poison_step)(inputs))
    if args.nested:  # x as a nested tuple inside a dict: (x[:, :3], (x[:, 3:4], x[:, 4:]))
        x = {"pair": (x[:, :3], (x[:, 3:4], x[:, 4:]))}
        model = nested_model(model)
    keep_batch(args, x, y, sample_weight)
    result = {"ended": "finished"}
    functions = TrainFunctions()
    first_epoch = data(argparse.Namespace(**dict(vars(args), clean=True))) if args.fit_per_epoch else None
    poisoned_step = args.poison_step + (SAMPLES // BATCH if args.fit_per_epoch else 0)
    graph = GraphOps(x, y)
    rows = slice(args.poison_step * BATCH, (args.poison_step + 1) * BATCH)
    # skip mode's expected per-sample loss (an extra forward pass: not where a layer counts its calls, --random-poison)
    simple = args.on_nan == "skip" and not (args.dict or args.nested or args.fit_per_epoch or args.random_poison)
    plain = (x[rows], y[rows]) if simple else None
    callbacks = [capsule, KeepPreStep(poisoned_step, args.out, plain), functions] + ([graph] if args.jit else [])
    callbacks += checkpoints(args)
    fit = dict(sample_weight=sample_weight, batch_size=BATCH, shuffle=False, verbose=0, callbacks=callbacks)
    try:
        if args.fit_per_epoch:
            for epoch, (xs, ys, _) in enumerate([first_epoch, (x, y, None)]):
                model.fit(xs, ys, epochs=epoch + 1, initial_epoch=epoch, **fit)
                if capsule.triggered:
                    break
            result["epochs"] = epoch + 1
        else:
            history = model.fit(x, y, epochs=2, **fit)
            result["epochs"] = len(history.history.get("loss", []))
    except NanCapsuleError as e:
        result = {"ended": "raised", "message": str(e)}
    result.update(captured=capsule.captured, steps=int(model.optimizer.iterations.numpy()), triggers=capsule.triggered)
    result["host_reads"] = capsule.capsule.host_reads  # device-to-host reads of the capsule's counters
    result["finite_after"] = all(bool(np.isfinite(v.numpy()).all()) for v in model.variables)
    if args.checkpoint:
        result["checkpoints"] = checkpoints_finite(args)
    if args.fit_per_epoch:
        refit(model, capsule, functions, first_epoch)
        firsts = [next(i for i, g in enumerate(functions.seen) if g is f) for f in functions.seen]
        result["train_functions"] = [sorted(set(firsts)).index(i) for i in firsts]
    if args.steps_per_execution > 1:
        after = {"w:" + v.path: v.numpy() for v in model.trainable_variables}
        after.update({"o:" + v.path: v.numpy() for v in model.optimizer.variables})
        np.savez(os.path.join(args.out, "after.npz"), **after)
    if args.jit:
        result.update(jit_compile=model.jit_compile, host_reads=capsule.capsule.host_reads, graph=graph.ops)
    if args.mixed:
        result["scale"] = float(model.optimizer.dynamic_scale.numpy())
    with open(os.path.join(args.out, "result.json"), "w") as f:
        json.dump(result, f)


def checkpoints(args):
    """--checkpoint F: a ModelCheckpoint (weights only) saving every F batches (or each epoch) into OUT/ckpt."""
    if not args.checkpoint:
        return []
    by_epoch = args.checkpoint == "epoch"
    name = "e{epoch}.weights.h5" if by_epoch else "e{epoch}-b{batch}.weights.h5"
    path = os.path.join(args.out, "ckpt", name)
    freq = "epoch" if by_epoch else int(args.checkpoint)
    return [keras.callbacks.ModelCheckpoint(path, save_weights_only=True, save_freq=freq)]


def checkpoints_finite(args):
    """Each checkpoint saved, loaded into a fresh model: whether every variable it holds is finite."""
    folder = os.path.join(args.out, "ckpt")
    finite = {}
    for name in sorted(os.listdir(folder)):
        model = build(args)
        model.load_weights(os.path.join(folder, name))
        finite[name] = all(bool(np.isfinite(v.numpy()).all()) for v in model.variables)
    return finite


def graph_ops(train_function, x, y):
    """The watched train function traced for this data: whether some function in it must compile with XLA, and the
    op types of every function it holds (an EagerPyFunc cannot compile)."""
    functions = [f for f in _closure_functions(train_function) if hasattr(f, "get_concrete_function")]
    iterator = iter(tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH))
    outer = [f for f in functions if getattr(f, "__name__", "") == "multi_step_on_iterator"]
    graph = next(f for f in outer if hasattr(f, "function_spec")).get_concrete_function(iterator).graph
    library = graph.as_graph_def().library.function
    nodes = [n for f in library for n in f.node_def] + list(graph.as_graph_def().node)
    # what one step hands back to the host: the outputs of Keras's compiled one-step function
    step_outputs = [len(f.signature.output_arg) for f in library if "one_step_on_data" in f.signature.name]
    xla = any(n.attr["_XlaMustCompile"].b for n in nodes)
    # the capsule's variables the step takes (each costs an XLA step its handling every call, written or not)
    ours = sorted(v.name.split("/")[-1].split(":")[0] for v in graph.variables if "nan_capsule" in v.name)
    return {"xla": xla, "ops": sorted({n.op for n in nodes}), "step_outputs": step_outputs, "capsule_variables": ours}


def _closure_functions(fn, depth=0):
    """The callables a function closes over, and theirs (Keras's train function is closures around tf.functions)."""
    found = [fn]
    inner = getattr(fn, "python_function", fn)
    for cell in getattr(inner, "__closure__", None) or ():
        value = cell.cell_contents
        if callable(value) and depth < 4 and not isinstance(value, type):
            found += _closure_functions(value, depth + 1)
    return found


def refit(model, capsule, functions, clean):
    """After the watched loop: fit without the NanCapsule (not watched: a train function of its own), with it (its
    watched function again), and with it after a compile (traced anew: the compile may have changed the loss)."""
    x, y, _ = clean
    model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, callbacks=[functions])
    model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, callbacks=[capsule, functions])
    model.compile(optimizer=model.optimizer, loss="mse")
    model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, callbacks=[capsule, functions])


def nested_model(model):
    inputs = {"pair": (keras.Input((3,)), (keras.Input((1,)), keras.Input((1,))))}
    a, (b, c) = inputs["pair"]
    return _wrapped(model, inputs, keras.layers.Concatenate()([a, b, c]))


def keep_batch(args, x, y, sample_weight):
    """The poisoned step's batch, named as the capsule names it (rows in order: fit runs with shuffle=False)."""
    rows = slice(args.poison_step * BATCH, (args.poison_step + 1) * BATCH)
    named = {"x": x, "y": y, "sample_weight": sample_weight}
    flat = {}
    for name, value in named.items():
        _flatten(name, value, rows, flat)
    np.savez(os.path.join(args.out, "batch.npz"), **flat)


def _flatten(name, value, rows, flat):
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(f"{name}/{key}", item, rows, flat)
    elif isinstance(value, tuple):
        for i, item in enumerate(value):
            _flatten(f"{name}/{i}", item, rows, flat)
    elif value is not None:
        flat[name] = value[rows]


def _wrapped(model, inputs, features):
    outer = keras.Model(inputs, model(features))
    outer.compile(optimizer=model.optimizer, loss="mse", jit_compile=model.jit_compile)
    return outer


if __name__ == "__main__":
    sys.exit(main())

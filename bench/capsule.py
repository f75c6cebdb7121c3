"""NaN capsule (#26): what watching costs, what a capture and a replay take.

    .venv/bin/python bench/capsule.py [--steps 600] [--reps 3] [--big-mb 100] [--no-big] [--no-replay]
    .venv/bin/python bench/capsule.py --paired 150  # the overhead alone, robust to a busy host
    .venv/bin/python bench/capsule.py --paired 150 --xla  # the same, every model compiled with jit_compile=True
    .venv/bin/python bench/capsule.py --paired 60 --mirrored  # the same under MirroredStrategy, 2 logical CPUs
    .venv/bin/python bench/capsule.py --paired 300 --history [--xla]  # the per-layer history's own cost
    .venv/bin/python bench/capsule.py --paired 30 --xla --cpu  # CPU time per step, not wall (a shared host)

In one run, on the same programs (a Keras MLP 64-256-256-10 and a small conv net, batch 64, --steps steps each):
step time with no debugging, with NanCapsule, and with tfdbg2 FULL_HEALTH dumping (circular buffer 1000) as the
reference, and NanCapsule with its optional tfdbg2 circular buffer (tfdbg_buffer=1000, CURT_HEALTH: what the flushed
dump in the capsule costs). Each (program, setting) runs in its own process, the settings interleaved --reps times
(A B C D A B C D ...) so that a drifting machine moves all four alike; the figure is the median over the reps of
each run's median step time after 50 warm-up steps. Then: the capsule of a model of --big-mb MB of weights (Adam:
its state is twice that again) written at a NaN on the first step, timed inside the process (the capture's whole
Python side: reading the variables and writing the files); and `replay` of the MLP's capsule, timed from outside,
TensorFlow's start included.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# capsule_tfdbg: NanCapsule(tfdbg_buffer=1000), tfdbg2 CURT_HEALTH with a circular buffer flushed into the capsule
SETTINGS = ("none", "capsule", "full_health", "capsule_tfdbg")
PROGRAMS = ("mlp", "conv")
WARMUP = 50
PAIRED_BLOCK = 20  # steps each setting trains in turn for the paired overhead figure
# "cpu": the paired steps timed in the process's CPU time (--cpu): a shared host's other jobs move the wall clock far
# more than the process's own CPU time
CLOCK_ENV = "NAN_CAPSULE_BENCH_CLOCK"


def env() -> dict[str, str]:
    e = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES=os.environ.get("CUDA_VISIBLE_DEVICES", ""))
    e["PYTHONPATH"] = ROOT + os.pathsep + e.get("PYTHONPATH", "")
    return e


# --- worker side (TensorFlow) -------------------------------------------------------------------------------------


def build(kind: str, keras, big_mb: int = 0):
    if kind == "mlp":
        layers = [keras.Input((64,)), keras.layers.Dense(256, activation="relu"), keras.layers.Dense(256, "relu")]
        return keras.Sequential([*layers, keras.layers.Dense(10)]), (64,)
    if kind == "conv":
        layers = [
            keras.Input((28, 28, 1)),
            keras.layers.Conv2D(16, 3, activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(32, 3, activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
        ]
        return keras.Sequential([*layers, keras.layers.Dense(10)]), (28, 28, 1)
    width = int((big_mb * 2**20 / 4 / 2) ** 0.5)  # two square Dense layers hold big_mb MB of float32
    layers = [keras.Input((width,)), keras.layers.Dense(width), keras.layers.Dense(width), keras.layers.Dense(10)]
    return keras.Sequential(layers), (width,)


def worker(kind: str, setting: str, steps: int, out: str) -> dict:
    import keras
    import numpy as np
    import tensorflow as tf

    dump = tempfile.mkdtemp(prefix="capsule-bench-dump-")
    try:
        if setting == "full_health":
            tf.debugging.experimental.enable_dump_debug_info(dump, "FULL_HEALTH", circular_buffer_size=1000)
        keras.utils.set_random_seed(0)
        model, shape = build(kind, keras)
        model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        batches = 100
        x = np.random.default_rng(0).normal(size=(64 * batches, *shape)).astype("float32")
        y = np.random.default_rng(1).integers(0, 10, size=64 * batches)
        if out:  # the replay bench's capsule: the last sample of the last batch poisoned
            x[-1, 0] = np.nan
        marks: list[float] = []
        # Marks at each batch's begin: a batch-end hook would make Keras sync and convert the logs every step in all
        # three settings alike (and give up its asynchronous batch ends), hiding what the watch itself costs.
        timer = keras.callbacks.LambdaCallback(on_train_batch_begin=lambda b, logs: marks.append(time.perf_counter()))
        callbacks = [timer]
        if setting in ("capsule", "capsule_tfdbg", "capsule_no_history"):
            from tensorboard_plugin_dbg.capsule import NanCapsule

            buffer = 1000 if setting == "capsule_tfdbg" else 0
            history = {"layer_history": 0} if setting == "capsule_no_history" else {}  # the ring's cost, paired
            callbacks.append(NanCapsule(out or os.path.join(dump, "capsules"), tfdbg_buffer=buffer, **history))
        model.fit(x, y, batch_size=64, epochs=-(-steps // batches), shuffle=False, verbose=0, callbacks=callbacks)
        step_ms = [1000 * (b - a) for a, b in zip(marks[WARMUP:], marks[WARMUP + 1 :])]
        dumped = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(dump) for f in fs)
        return {"median_ms": statistics.median(step_ms), "steps": len(marks), "dump_bytes": dumped}
    finally:
        if setting in ("full_health", "capsule_tfdbg"):
            tf.debugging.experimental.disable_dump_debug_info()
        shutil.rmtree(dump, ignore_errors=True)


def big_worker(big_mb: int, out: str) -> dict:
    import keras
    import numpy as np

    from tensorboard_plugin_dbg.capsule import NanCapsule, watch

    timings: list[float] = []
    original = watch.Watch._write  # the capture's Python side: the variables read, the files written

    def timed(self, *args):
        start = time.perf_counter()
        try:
            return original(self, *args)
        finally:
            timings.append(time.perf_counter() - start)

    watch.Watch._write = timed
    model, shape = build("big", keras, big_mb)
    model.compile("adam", "mse")
    x = np.ones((8, *shape), "float32")
    x[0, 0] = np.nan
    capsule = NanCapsule(out)
    model.fit(x, np.zeros((8, 10), "float32"), batch_size=8, epochs=1, verbose=0, callbacks=[capsule])
    folder = capsule.captured[0]
    sizes = {f: os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)}
    weights_bytes = sum(int(np.prod(v.shape)) * 4 for v in model.weights)
    return {"capture_s": timings[0], "weights_mb": weights_bytes / 2**20, "files_mb": sum(sizes.values()) / 2**20}


def paired_worker(kind: str, blocks: int, xla: bool = False, history_only: bool = False) -> dict:
    """The watch's overhead robust to a busy host: one process, one copy of the model per setting, each trained
    PAIRED_BLOCK steps in turn (`fit` on a repeated dataset), --paired blocks each, so that load which comes and goes
    over seconds hits every setting alike. Beside no debugging and NanCapsule, two points of reference:
    - "wait": plain Adam, each gradient held until every gradient of the step exists (no check, no branch): what
      any check-before-apply pays, the update of the last layers no longer overlapping the backward pass of the first;
    - "lso": Keras's own check-before-apply, `LossScaleOptimizer` (float32 model: the scaling, the check, the cond).
    - "spike": NanCapsule with its loss-spike rule on (spike=10.0): the rule's own cost is its ratio over "capsule".
    - "no_history": NanCapsule without its per-layer history (layer_history=0): the ring's own cost is "capsule"
      over it ("history", paired the same way).
    - "with_previous": NanCapsule(layer_history=0, previous_batch=True): the previous batch's every-step copy is its
      ratio over "no_history" ("previous").
    A setting's figure is the median of its steps (each block's first two left out); the spread, the quartiles of the
    ratios to no debugging over groups of 10 blocks. `xla`: every model compiled with jit_compile=True (the NanCapsule
    keeps it), the ratios against no debugging with XLA. `history_only`: no debugging, NanCapsule, "no_history" and
    "with_previous" alone (more blocks in the same time for the ring's and the previous batch's own costs)."""
    import keras
    import numpy as np
    import tensorflow as tf

    from tensorboard_plugin_dbg.capsule import NanCapsule

    def compiled(optimizer: object = "adam"):
        keras.utils.set_random_seed(0)
        model, shape = build(kind, keras)
        model.compile(optimizer, keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=xla)
        return model, shape

    folder = tempfile.mkdtemp(prefix="capsule-bench-paired-")
    (plain, shape), (watched, _), (waiting, _), (spiked, _) = compiled(), compiled(), compiled(), compiled()
    lso, _ = compiled(keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam()))
    hold_until_all_gradients(waiting.optimizer, tf)
    x = np.random.default_rng(0).normal(size=(100 * 64, *shape)).astype("float32")
    y = np.random.default_rng(1).integers(0, 10, size=100 * 64)
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(64).repeat()
    runs = {"none": (plain, []), "capsule": (watched, [NanCapsule(folder)]), "wait": (waiting, []), "lso": (lso, [])}
    runs["spike"] = (spiked, [NanCapsule(folder, spike=10.0)])
    runs["no_history"] = (compiled()[0], [NanCapsule(folder, layer_history=0)])
    # the previous step's batch kept too (off by default: its copy at every step's end)
    runs["with_previous"] = (compiled()[0], [NanCapsule(folder, layer_history=0, previous_batch=True)])
    if history_only:
        runs = {name: runs[name] for name in ("none", "capsule", "no_history", "with_previous")}
    try:
        steps = alternate_steps(runs, data, blocks, keras)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    figures = {name: paired_figures(steps[name], steps["none"]) for name in runs}
    previous = paired_figures(steps["with_previous"], steps["no_history"])
    return dict(figures, history=paired_figures(steps["capsule"], steps["no_history"]), previous=previous)


def alternate(runs: dict, data, blocks: int, keras) -> dict:
    """The figures of each setting against "none", its steps timed by `alternate_steps`."""
    steps = alternate_steps(runs, data, blocks, keras)
    return {name: paired_figures(steps[name], steps["none"]) for name in runs}


def alternate_steps(runs: dict, data, blocks: int, keras) -> dict[str, list[list[float]]]:
    """Each setting's model trained PAIRED_BLOCK steps in turn, `blocks` times (the order reversed every other
    block): each setting's step times (ms), block by block."""
    steps: dict[str, list[list[float]]] = {name: [] for name in runs}
    marks: list[float] = []
    clock = time.process_time if os.environ.get(CLOCK_ENV) == "cpu" else time.perf_counter
    timer = keras.callbacks.LambdaCallback(on_train_batch_begin=lambda b, logs: marks.append(clock()))
    for block in range(blocks + 1):  # the first block traces each train function: not counted
        order = list(runs) if block % 2 == 0 else list(runs)[::-1]
        for name in order:
            model, extra = runs[name]
            marks.clear()
            model.fit(data, steps_per_epoch=PAIRED_BLOCK, epochs=1, verbose=0, callbacks=[timer, *extra])
            if block:
                steps[name].append([1000 * (b - a) for a, b in zip(marks[2:], marks[3:])])
    return steps


def mirrored_worker(kind: str, blocks: int) -> dict:
    """The paired overhead under tf.distribute.MirroredStrategy on two logical CPU devices (global batch 64, 32 rows
    a replica): no debugging against NanCapsule, whose check is reduced across the replicas before any update, and
    against Keras's LossScaleOptimizer, the same cross-replica cond around the update (its floor: the cond's inputs
    switched, the step's graph off the executor's fast path), though it checks the first replica only."""
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras
    import numpy as np

    from tensorboard_plugin_dbg.capsule import NanCapsule

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

    def compiled(lso: bool = False):
        keras.utils.set_random_seed(0)
        with strategy.scope():
            model, shape = build(kind, keras)
            optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam()) if lso else "adam"
            model.compile(optimizer, keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model, shape

    folder = tempfile.mkdtemp(prefix="capsule-bench-mirrored-")
    (plain, shape), (watched, _), (lso, _) = compiled(), compiled(), compiled(lso=True)
    x = np.random.default_rng(0).normal(size=(100 * 64, *shape)).astype("float32")
    y = np.random.default_rng(1).integers(0, 10, size=100 * 64)
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(64).repeat()
    try:
        runs = {"none": (plain, []), "capsule": (watched, [NanCapsule(folder)]), "lso": (lso, [])}
        return alternate(runs, data, blocks, keras)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def hold_until_all_gradients(optimizer, tf) -> None:
    """The "wait" reference: the optimizer's apply (on this instance) gets each gradient only once all exist."""
    original = optimizer.apply

    def apply(grads, trainable_variables=None):
        grads = list(grads)
        with tf.control_dependencies([g for g in grads if g is not None]):
            held = [None if g is None else tf.identity(g) for g in grads]
        return original(held, trainable_variables)

    optimizer.apply = apply


def paired_figures(blocks: list[list[float]], baseline: list[list[float]]) -> dict:
    def median_of(group: list[list[float]]) -> float:
        return statistics.median(t for block in group for t in block)

    groups = range(0, len(blocks) - 9, 10)
    ratios = [median_of(blocks[g : g + 10]) / median_of(baseline[g : g + 10]) for g in groups] or [float("nan")]
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    return {
        "ms": median_of(blocks),
        "ratio": median_of(blocks) / median_of(baseline),
        "q1": quartiles[0],
        "q3": quartiles[2],
    }


# --- driver -------------------------------------------------------------------------------------------------------


def spawn(*args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", *args], capture_output=True, text=True, env=env(), check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def overhead(steps: int, reps: int, programs: tuple[str, ...], settings: tuple[str, ...]) -> dict:
    figures: dict[str, dict[str, list[float]]] = {}
    for kind in programs:
        figures[kind] = {s: [] for s in SETTINGS}
        for _ in range(reps):
            for setting in settings:
                figures[kind][setting].append(spawn(kind, setting, str(steps), "")["median_ms"])
    return figures


def replay_time(steps: int) -> dict:
    work = tempfile.mkdtemp(prefix="capsule-bench-")
    try:
        spawn("mlp", "capsule", str(steps), work)
        folder = os.path.join(work, os.listdir(work)[0])
        program = [sys.executable, __file__, "--worker", "mlp", "capsule", str(steps), work]
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "tensorboard_plugin_dbg", "replay", folder, "--", *program],
            capture_output=True,
            text=True,
            env=env(),
            check=False,
        )
        return {"replay_s": time.perf_counter() - start, "exit": proc.returncode}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def big_capture(big_mb: int) -> dict:
    work = tempfile.mkdtemp(prefix="capsule-bench-big-")
    try:
        return spawn("big", "capsule", str(big_mb), work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        kind, setting, number, out = (sys.argv[2:] + [""])[:4]
        if kind == "big":
            result = big_worker(int(number), out)
        elif setting == "mirrored":
            result = mirrored_worker(kind, int(number))
        elif setting.startswith("paired"):
            result = paired_worker(kind, int(number), "xla" in setting, "history" in setting)
        else:
            result = worker(kind, setting, int(number), out)
        print(json.dumps(result))
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--big-mb", type=int, default=100)
    p.add_argument("--no-big", action="store_true")
    p.add_argument("--no-replay", action="store_true")
    p.add_argument("--programs", default=",".join(PROGRAMS), help="mlp,conv")
    p.add_argument("--no-reference", action="store_true", help="leave FULL_HEALTH out (the watch's overhead only)")
    p.add_argument("--paired", type=int, default=0, metavar="BLOCKS", help="only the paired in-process overhead")
    p.add_argument("--xla", action="store_true", help="--paired with every model compiled with jit_compile=True")
    p.add_argument("--mirrored", action="store_true", help="--paired under MirroredStrategy, two logical CPU devices")
    p.add_argument("--history", action="store_true", help="--paired: the per-layer history's own cost only")
    p.add_argument("--cpu", action="store_true", help="--paired: CPU time per step (time.process_time), not wall")
    args = p.parse_args()
    if args.cpu:
        os.environ[CLOCK_ENV] = "cpu"  # the workers inherit it (env())
    if args.paired and args.mirrored:
        print(f"step time in fit under MirroredStrategy (2 logical CPUs), {args.paired} blocks each, one process")
        for kind in args.programs.split(","):
            f = spawn(kind, "mirrored", str(args.paired), "")
            print(f"{kind:6} no debugging {f['none']['ms']:.3f} ms")
            for name, label in (("capsule", "NanCapsule"), ("lso", "LossScaleOptimizer")):
                pct = {k: f"{100 * (f[name][k] - 1):+.1f}%" for k in ("ratio", "q1", "q3")}
                print(
                    f"       {label:19} {f[name]['ms']:.3f} ms {pct['ratio']:>7} (quartiles {pct['q1']} .. {pct['q3']})"
                )
        return
    if args.paired:
        xla = " (jit_compile=True)" if args.xla else ""
        clock = ", CPU time" if args.cpu else ""
        print(
            f"step time{clock} in fit{xla}, {PAIRED_BLOCK}-step blocks in turn, {args.paired} blocks each, one process"
        )
        labels = {"capsule": "NanCapsule", "wait": "updates wait for all gradients", "lso": "LossScaleOptimizer"}
        labels["spike"] = "NanCapsule(spike=10)"
        labels["no_history"] = "NanCapsule(layer_history=0)"
        labels["history"] = "per-layer history (vs layer_history=0)"
        labels["with_previous"] = "NanCapsule(layer_history=0, previous_batch=True)"
        labels["previous"] = "previous batch kept (vs previous_batch off)"
        setting = "paired" + ("_xla" if args.xla else "") + ("_history" if args.history else "")
        for kind in args.programs.split(","):
            f = spawn(kind, setting, str(args.paired), "")
            print(f"{kind:6} no debugging {f['none']['ms']:.3f} ms")
            for name, label in ((n, label) for n, label in labels.items() if n in f):
                pct = {k: f"{100 * (f[name][k] - 1):+.1f}%" for k in ("ratio", "q1", "q3")}
                print(
                    f"       {label:50} {f[name]['ms']:.3f} ms {pct['ratio']:>7} (quartiles {pct['q1']} .. {pct['q3']})"
                )
        return
    settings = SETTINGS[:2] if args.no_reference else SETTINGS
    print(f"step time, median of {args.reps} runs' medians ({args.steps} steps, after {WARMUP} warm-up steps)")
    print(
        f"{'program':8} {'none ms':>8} {'capsule ms':>11} {'overhead':>9} {'FULL_HEALTH ms':>15} {'x':>6}"
        f" {'capsule+tfdbg ms':>17} {'x':>6}"
    )
    for kind, by_setting in overhead(args.steps, args.reps, tuple(args.programs.split(",")), settings).items():
        none, watch, full, buffered = (
            statistics.median(by_setting[s]) if by_setting[s] else float("nan") for s in SETTINGS
        )
        print(
            f"{kind:8} {none:8.2f} {watch:11.2f} {100 * (watch / none - 1):8.1f}% {full:15.2f} {full / none:6.1f}"
            f" {buffered:17.2f} {buffered / none:6.1f}"
        )
        fastest = {s: min(v) for s, v in by_setting.items() if v}  # the least disturbed run of each (shared host)
        print(
            f"         fastest runs: none {fastest['none']:.2f}, capsule {fastest['capsule']:.2f} ms: "
            f"{100 * (fastest['capsule'] / fastest['none'] - 1):.1f}% overhead"
        )
        print(f"         runs: {json.dumps({s: [round(v, 2) for v in by_setting[s]] for s in SETTINGS})}")
    if not args.no_big:
        big = big_capture(args.big_mb)
        print(
            f"capture of a {big['weights_mb']:.0f} MB model (Adam: {big['files_mb']:.0f} MB written): "
            f"{big['capture_s']:.2f} s"
        )
    if not args.no_replay:
        replay = replay_time(args.steps)
        print(
            f"replay of the MLP's capsule, TensorFlow's start included: {replay['replay_s']:.1f} s "
            f"(exit {replay['exit']})"
        )


if __name__ == "__main__":
    main()

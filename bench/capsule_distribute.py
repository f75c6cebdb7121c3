"""NaN capsule under MirroredStrategy (#35): what the watch costs a replicated `fit` step.

    .venv/bin/python bench/capsule_distribute.py [--blocks 40] [--runs 3] [--programs mlp,conv]

Two logical CPU devices (`tf.config.set_logical_device_configuration`), global batch 64 (32 rows a replica), the MLP
and the conv net of bench/capsule.py. In each run (one process per run and program) three copies of the model train
PAIRED_BLOCK steps in turn, --blocks blocks each (the order reversed every other block), so that load which comes and
goes over seconds hits every setting alike:
- no debugging;
- NanCapsule: every replica's loss and gradients checked, each device deciding from its copy of the all-reduced
  gradients, the loss folded in (capsule/local_decision.py), its writes of the update held back behind one Switch of
  that device (capsule/device_gates.py);
- Keras's LossScaleOptimizer: one cross-replica `cond` around the update, checking the first replica only (the
  reference: what a check-before-apply costs under the strategy).
A setting's figure is the median of its step times (each block's first two left out) over the median of no
debugging's; the quartiles are those of the ratio over groups of 10 blocks; beside it the process CPU time a step
(all threads: the work, whatever the host's load does to the wall clock). The median over --runs runs is the figure
to quote, with the host's load average before and after each run (the host is shared).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import capsule as single  # noqa: E402 - bench/capsule.py: the programs and the paired timing

SETTINGS = {"capsule": "NanCapsule", "lso": "LossScaleOptimizer"}


def worker(kind: str, blocks: int) -> dict:
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras

    from tensorboard_plugin_dbg.capsule import NanCapsule

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    optimizers = {
        "none": lambda: "adam",
        "capsule": lambda: "adam",
        "lso": lambda: keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam()),
    }
    folder = tempfile.mkdtemp(prefix="capsule-bench-distribute-")
    cpu_ms: dict[str, list[float]] = {name: [] for name in optimizers}
    runs, shape = {}, ()
    for name, optimizer in optimizers.items():
        keras.utils.set_random_seed(0)  # the same initial weights in every setting
        with strategy.scope():
            model, shape = single.build(kind, keras)
            model.compile(optimizer(), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        watching = [NanCapsule(folder)] if name == "capsule" else []
        runs[name] = (model, [cpu_timer(cpu_ms[name], keras), *watching])
    try:
        figures = single.alternate(runs, dataset(shape, tf), blocks, keras)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    for name, block_ms in cpu_ms.items():
        figures[name]["cpu_ms"] = statistics.median(block_ms[1:])  # the first block traces: left out
    return figures


def dataset(shape: tuple[int, ...], tf):
    """100 batches of 64 rows, repeated (the same data as bench/capsule.py's paired runs)."""
    import numpy as np

    x = np.random.default_rng(0).normal(size=(100 * 64, *shape)).astype("float32")
    y = np.random.default_rng(1).integers(0, 10, size=100 * 64)
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(64).repeat()


def cpu_timer(into: list[float], keras):
    """The process CPU time a step of each block (all threads), appended to `into`."""
    began: list[float] = []

    def begin(logs=None) -> None:
        began[:] = [time.process_time()]

    def end(logs=None) -> None:
        into.append(1000 * (time.process_time() - began[0]) / single.PAIRED_BLOCK)

    return keras.callbacks.LambdaCallback(on_train_begin=begin, on_train_end=end)


def spawn(kind: str, blocks: int) -> dict:
    command = [sys.executable, __file__, "--worker", kind, str(blocks)]
    proc = subprocess.run(command, capture_output=True, text=True, env=single.env(), check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        print(json.dumps(worker(sys.argv[2], int(sys.argv[3]))))
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--blocks", type=int, default=40)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--programs", default=",".join(single.PROGRAMS), help="mlp,conv")
    args = p.parse_args()
    print(f"fit under MirroredStrategy (2 logical CPUs), {args.blocks} blocks of {single.PAIRED_BLOCK} steps a setting")
    for kind in args.programs.split(","):
        ratios: dict[str, list[float]] = {name: [] for name in SETTINGS}
        for run in range(args.runs):
            load_before = os.getloadavg()[0]
            f = spawn(kind, args.blocks)
            load = f"load {load_before:.1f}..{os.getloadavg()[0]:.1f}"
            none = f"no debugging {f['none']['ms']:.3f} ms ({f['none']['cpu_ms']:.2f} ms CPU)"
            print(f"{kind:5} run {run + 1}: {none}, {load}")
            for name, label in SETTINGS.items():
                ratios[name].append(f[name]["ratio"])
                pct = {k: f"{100 * (f[name][k] - 1):+.1f}%" for k in ("ratio", "q1", "q3")}
                cpu = 100 * (f[name]["cpu_ms"] / f["none"]["cpu_ms"] - 1)
                spread = f"quartiles {pct['q1']} .. {pct['q3']}"
                print(f"      {label:19} {f[name]['ms']:.3f} ms {pct['ratio']:>7} ({spread}), CPU {cpu:+.1f}%")
        for name, label in SETTINGS.items():
            runs = ", ".join(f"{100 * (r - 1):+.1f}%" for r in ratios[name])
            median = 100 * (statistics.median(ratios[name]) - 1)
            print(f"{kind:5} {label}: median of {args.runs} runs {median:+.1f}% ({runs})")


if __name__ == "__main__":
    main()

"""NanCapsule under XLA (#35): what the batch stash (capsule/stash.py) costs a small MLP's step, paired in one
process, in CPU time per step (`time.process_time` at each batch begin: a shared host's other jobs move the wall
clock far more than the process's own CPU time).

    .venv/bin/python bench/capsule_stash.py [--blocks 80]

Settings, each its own copy of bench/capsule.py's MLP (64-256-256-10, batch 64, Adam, jit_compile=True), trained 20
steps in turn (the order reversed every other block, the first block not counted, each block's first two steps
left out): no debugging; NanCapsule(layer_history=0) as shipped (the previous batch off); the same with
previous_batch=True (each step's batch copied into device variables at its end); and the same with the stash
switched off on the instance (no batch kept at all: the capsule would hold none, a measurement only). The figure is
each setting's median step over the blocks, against no debugging; the spread, the quartiles of the ratios over
groups of 10 blocks.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

BLOCK = 20


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--blocks", type=int, default=80)
    args = p.parse_args()
    import keras
    import numpy as np
    import tensorflow as tf
    from capsule import build

    from tensorboard_plugin_dbg.capsule import NanCapsule

    def compiled():
        keras.utils.set_random_seed(0)
        model, _ = build("mlp", keras)
        model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=True)
        return model

    x = np.random.default_rng(0).normal(size=(100 * 64, 64)).astype("float32")
    y = np.random.default_rng(1).integers(0, 10, size=100 * 64)
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(64).repeat()
    folder = tempfile.mkdtemp(prefix="capsule-stash-bench-")
    off = NanCapsule(folder, layer_history=0)
    off.capsule.stash._ensure = lambda *a: []  # noqa: SLF001 - the measurement's ablation, never shipped
    runs = {
        "none": (compiled(), []),
        "capsule": (compiled(), [NanCapsule(folder, layer_history=0)]),
        "previous_batch": (compiled(), [NanCapsule(folder, layer_history=0, previous_batch=True)]),
        "stash_off": (compiled(), [off]),
    }
    marks: list[float] = []
    timer = keras.callbacks.LambdaCallback(on_train_batch_begin=lambda b, logs: marks.append(time.process_time()))
    steps: dict[str, list[float]] = {name: [] for name in runs}
    try:
        for block in range(args.blocks + 1):
            for name in list(runs) if block % 2 == 0 else list(runs)[::-1]:
                model, extra = runs[name]
                marks.clear()
                model.fit(data, steps_per_epoch=BLOCK, epochs=1, verbose=0, callbacks=[timer, *extra])
                if block:
                    steps[name].append((marks[-1] - marks[2]) / (len(marks) - 3))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    base = steps["none"]
    print(f"CPU time per step, MLP, jit_compile=True, {args.blocks} blocks of {BLOCK} steps each, one process")
    for name, values in steps.items():
        groups = range(0, len(values) - 9, 10)
        ratios = [statistics.median(values[g : g + 10]) / statistics.median(base[g : g + 10]) for g in groups]
        q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [float("nan")] * 3
        ratio = statistics.median(values) / statistics.median(base)
        print(
            f"{name:15} {1000 * statistics.median(values):.3f} ms {100 * (ratio - 1):+6.1f} %"
            f" (quartiles {100 * (q[0] - 1):+.1f} .. {100 * (q[2] - 1):+.1f} %)"
        )


if __name__ == "__main__":
    main()

"""The per-layer ring's due steps (#36): what a step where max |w| is measured costs against its neighbours.

    .venv/bin/python bench/capsule_due.py [--blocks 60] [--xla]

Each step's CPU time in `fit` (marks at each batch's begin, as bench/capsule.py's paired figures), for NanCapsule
(its ring on: max |w| every MAX_EVERY-th step, in the check's rare branch) and NanCapsule(layer_history=0), each
trained 24-step blocks in turn in one process. A step's figure is set against the other steps *of the same model*:
the steps where max |w| is due (the step's number a multiple of MAX_EVERY) against the rest, so that the host's load
moves both alike; the model without the ring, whose steps at the same numbers measure nothing, is the instrument's
floor. Printed for the first and the last third of the blocks (TensorFlow's executor learns a function's op costs
over its runs, and the due branch runs every MAX_EVERY-th step). bench/README.md, "Per-layer history (#36)".
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
import capsule as bench  # noqa: E402 - bench/capsule.py: the programs

BLOCK = 24  # steps a model trains in turn (a multiple of MAX_EVERY: each block holds its due steps)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--blocks", type=int, default=60)
    p.add_argument("--xla", action="store_true", help="every model compiled with jit_compile=True")
    args = p.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import numpy as np
    import tensorflow as tf

    from tensorboard_plugin_dbg.capsule import NanCapsule
    from tensorboard_plugin_dbg.capsule.layer_history import MAX_EVERY

    def compiled() -> tuple:
        keras.utils.set_random_seed(0)
        model, shape = bench.build("mlp", keras)
        model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=args.xla)
        return model, shape

    folder = tempfile.mkdtemp(prefix="capsule-bench-due-")
    (ring, shape), (off, _) = compiled(), compiled()
    x = np.random.default_rng(0).normal(size=(100 * 64, *shape)).astype("float32")
    y = np.random.default_rng(1).integers(0, 10, size=100 * 64)
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(64).repeat()
    runs = {"ring": (ring, NanCapsule(folder)), "layer_history=0": (off, NanCapsule(folder, layer_history=0))}
    marks: list[float] = []
    timer = keras.callbacks.LambdaCallback(on_train_batch_begin=lambda b, logs: marks.append(time.process_time()))
    thirds: list[dict] = [{name: ([], []) for name in runs} for _ in range(2)]  # (other steps, due steps) in us
    try:
        for block in range(args.blocks + 1):  # the first block traces: not counted
            for name in list(runs) if block % 2 == 0 else list(runs)[::-1]:
                model, callback = runs[name]
                first = int(model.optimizer.iterations.numpy())  # the ring's step count too (one optimizer)
                marks.clear()
                model.fit(data, steps_per_epoch=BLOCK, epochs=1, verbose=0, callbacks=[timer, callback])
                part = 0 if block <= args.blocks // 3 else 1 if block > 2 * args.blocks // 3 else None
                for k in range(2, len(marks) - 1) if block and part is not None else ():
                    thirds[part][name][(first + k) % MAX_EVERY == 0].append(1e6 * (marks[k + 1] - marks[k]))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    xla = " (jit_compile=True)" if args.xla else ""
    print(f"MLP{xla}: each step's CPU time in fit, {BLOCK}-step blocks in turn, {args.blocks} blocks each")
    for label, part in zip(("first third", "last third"), thirds):
        for name, (other, due) in part.items():
            o, d = statistics.median(other), statistics.median(due)
            print(
                f"{label:12} {name:16} other steps {o:6.0f} us, due {d:6.0f} us: {d - o:+5.0f} us "
                f"({(d - o) / MAX_EVERY / o * 100:+.1f} % of a step, amortized)"
            )
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

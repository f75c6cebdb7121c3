"""NanCapsule on Keras 3's JAX backend (#41 item 3): what watching costs in `fit`, paired in one process.

    .venv/bin/python bench/capsule_jax.py [--blocks 40] [--kind mlp|conv] [--block-steps 25]

The models of bench/capsule.py (an MLP 64-256-256-10 and a small conv net, batch 64), KERAS_BACKEND=jax, one copy
per setting, each trained --block-steps steps in turn (`fit` on the same numpy arrays, the order reversed every other
block), --blocks blocks each after one untimed block that compiles each train function:
- "none": no debugging;
- "capsule": NanCapsule (check_every=16): the check and held-back update inside the jitted step, the carry;
- "lso": Keras's own check-before-apply on JAX, `LossScaleOptimizer` (its `ops.cond` around the update): the
  reference for what checking costs.
A block's time runs from its fit's first step to the model's state being ready (the work dispatched asynchronously
included), divided by its steps; a setting's figure is the median over the blocks, its ratio to "none" the median of
the blocks' ratios (each block against the "none" block beside it), with the quartiles of those ratios. One JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

os.environ["KERAS_BACKEND"] = "jax"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from capsule import build  # noqa: E402 - bench/capsule.py: the same models


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--blocks", type=int, default=40)
    parser.add_argument("--block-steps", type=int, default=25)
    parser.add_argument("--kind", default="mlp", choices=("mlp", "conv"))
    args = parser.parse_args()
    import jax
    import keras
    import numpy as np

    from tensorboard_plugin_dbg.capsule import NanCapsule

    def compiled(optimizer: object = "adam"):
        keras.utils.set_random_seed(0)
        model, shape = build(args.kind, keras)
        model.compile(optimizer, keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model, shape

    folder = tempfile.mkdtemp(prefix="capsule-jax-bench-")
    (plain, shape), (watched, _) = compiled(), compiled()
    lso, _ = compiled(keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam()))
    rows = args.block_steps * 64
    x = np.random.default_rng(0).normal(size=(rows, *shape)).astype("float32")
    y = np.random.default_rng(1).integers(0, 10, size=rows)
    runs = {"none": (plain, []), "capsule": (watched, [NanCapsule(folder)]), "lso": (lso, [])}
    times: dict[str, list[float]] = {name: [] for name in runs}
    try:
        for block in range(args.blocks + 1):  # the first block compiles each train function: not counted
            for name in list(runs) if block % 2 == 0 else list(runs)[::-1]:
                model, extra = runs[name]
                start = time.perf_counter()
                model.fit(x, y, batch_size=64, epochs=1, shuffle=False, verbose=0, callbacks=extra)
                jax.block_until_ready([v.value for v in model.trainable_variables])
                if block:
                    times[name].append(1000 * (time.perf_counter() - start) / args.block_steps)
        captured = watched.history.nan_capsules if hasattr(watched.history, "nan_capsules") else []
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    figures = {}
    for name, blocks in times.items():
        ratios = [a / b for a, b in zip(blocks, times["none"])]
        q = statistics.quantiles(ratios, n=4)
        figures[name] = {
            "ms_per_step": statistics.median(blocks),
            "ratio": statistics.median(ratios),
            "q1": q[0],
            "q3": q[2],
        }
    out = {"kind": args.kind, "blocks": args.blocks, "block_steps": args.block_steps, "captured": len(captured)}
    print(json.dumps({**out, "jax": jax.__version__, "keras": keras.__version__, **figures}))


if __name__ == "__main__":
    main()

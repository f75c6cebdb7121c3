"""NanCapsule under XLA (#35), taken apart: where a watched `fit` step's cost goes, against the same Keras model with
`jit_compile=True` and no capsule (NanCapsule(layer_history=0): the per-layer ring is #36's own figure).

    .venv/bin/python bench/capsule_xla.py [--blocks 60] [--calls 4000] [--programs mlp,conv]

Per program (bench/capsule.py's MLP 64-256-256-10 and small conv net, batch 64, Adam), in one process, two copies
of the model (no debugging, NanCapsule), each figure paired:
1. `fit`: each model trained 30 steps in turn, --blocks blocks (the order reversed every other block, the first block
   not counted), CPU time per step (`time.process_time` at each batch begin:
   a shared host's other jobs move the wall clock far more than the process's own CPU time), each block's first 10
   steps left out: after the other model ran, a block's first steps take up to 1.7x the later ones (the working set
   and TensorFlow's threads coming back), and with several settings in turn (bench/capsule.py --paired) that warm-up
   differs by what ran before, which moved the capsule's figure by ±10 points. The figure: the median over the
   blocks of each block's ratio of median steps (against the other model's block, run right before or after), with
   the quartiles of those ratios.
2. the train function alone (what `fit` calls once a step: Keras's XLA step, and for NanCapsule its host-side
   wrapper), --calls calls each (the conv net a quarter of them), alternating call by call, CPU time per call: 10th
   percentile and median.
3. the host's own per-step work, CPU time: the callback's batch hook and the wrapper's bookkeeping as `fit` runs them
   (timed in a loop; every `check_every`-th hook reads the trigger counter), and that read alone (its time, and
   divided by check_every).
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

BLOCK = 30  # steps a model trains in turn
WARM = 10  # a block's first steps, left out: slower by up to 70 % as the model's working set comes back (below)


def measure(kind: str, blocks: int, calls: int) -> dict[str, float]:
    import keras

    from tensorboard_plugin_dbg.capsule import NanCapsule

    plain, watched, data = two_models(kind)
    folder = tempfile.mkdtemp(prefix="capsule-xla-bench-")
    try:
        capsule = NanCapsule(folder, layer_history=0)
        figures = fit_pairs({"none": (plain, []), "capsule": (watched, [capsule])}, data, blocks, keras)
        capsule.set_model(watched)  # installed again, as fit does, for the train function alone
        watched.make_train_function()
        figures.update(train_function_pairs(plain.train_function, watched.train_function, data, calls))
        figures.update(host_side(capsule))
        assert not capsule.captured, "a clean run triggered"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return figures


def two_models(kind: str):
    """Two copies of the program (the same initial weights), each compiled with `jit_compile=True`, and its data."""
    import keras
    import numpy as np
    import tensorflow as tf
    from capsule import build

    def compiled():
        keras.utils.set_random_seed(0)
        model, shape = build(kind, keras)
        model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=True)
        return model, shape

    (plain, shape), (watched, _) = compiled(), compiled()
    x = np.random.default_rng(0).normal(size=(100 * 64, *shape)).astype("float32")
    y = np.random.default_rng(1).integers(0, 10, size=100 * 64)
    return plain, watched, tf.data.Dataset.from_tensor_slices((x, y)).batch(64).repeat()


def fit_pairs(runs: dict, data, blocks: int, keras) -> dict[str, float]:
    steps: dict[str, list[list[float]]] = {name: [] for name in runs}
    marks: list[float] = []
    timer = keras.callbacks.LambdaCallback(on_train_batch_begin=lambda b, logs: marks.append(time.process_time()))
    for block in range(blocks + 1):  # the first block traces and compiles: not counted
        for name in list(runs) if block % 2 == 0 else list(runs)[::-1]:
            model, extra = runs[name]
            marks.clear()
            model.fit(data, steps_per_epoch=BLOCK, epochs=1, verbose=0, callbacks=[timer, *extra])
            if block:
                steps[name].append([1000 * (b - a) for a, b in zip(marks[WARM:], marks[WARM + 1 :])])
    ratios = [statistics.median(c) / statistics.median(n) for c, n in zip(steps["capsule"], steps["none"])]
    q1, median, q3 = statistics.quantiles(ratios, n=4)
    return {
        "fit_none_ms": statistics.median(t for b in steps["none"] for t in b),
        "fit_ratio": median,
        "fit_q1": q1,
        "fit_q3": q3,
    }


def train_function_pairs(plain, watched, data, calls: int) -> dict[str, float]:
    iterators = {"none": iter(data), "capsule": iter(data)}
    functions = {"none": plain, "capsule": watched}
    for _ in range(50):
        for name in functions:
            functions[name](iterators[name])
    times: dict[str, list[float]] = {"none": [], "capsule": []}
    for call in range(calls):
        for name in ("none", "capsule") if call % 2 == 0 else ("capsule", "none"):
            start = time.process_time()
            functions[name](iterators[name])
            times[name].append(time.process_time() - start)

    def p10(values: list[float]) -> float:
        return statistics.quantiles(values, n=10)[0]

    return {
        "call_none_us": 1e6 * p10(times["none"]),
        "call_p10_ratio": p10(times["capsule"]) / p10(times["none"]),
        "call_median_ratio": statistics.median(times["capsule"]) / statistics.median(times["none"]),
    }


def host_side(capsule) -> dict[str, float]:
    watch = capsule.capsule
    loops = 20000
    start = time.process_time()
    for batch in range(loops):
        capsule.on_train_batch_begin(batch)
        watch.keep_batch(None, fit=True)
    hooks = (time.process_time() - start) / loops
    reads = 300
    start = time.process_time()
    for _ in range(reads):
        watch.poll(force=True)
    read = (time.process_time() - start) / reads
    return {"hooks_us": 1e6 * hooks, "read_us": 1e6 * read, "read_per_step_us": 1e6 * read / watch.check_every}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--blocks", type=int, default=60)
    p.add_argument("--calls", type=int, default=4000)
    p.add_argument("--programs", default="mlp,conv")
    args = p.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each program's lines as they come (a long run piped)
    print(
        f"NanCapsule(layer_history=0) vs no capsule, both jit_compile=True; CPU time; load {os.getloadavg()[0]:.1f}",
    )
    for kind in args.programs.split(","):
        calls = args.calls if kind == "mlp" else args.calls // 4  # the conv net's step is some 13x the MLP's
        f = measure(kind, args.blocks, calls)
        pct = {k: f"{100 * (f[k] - 1):+.1f}%" for k in f if "ratio" in k or k.endswith(("q1", "q3"))}
        print(
            f"{kind:5} fit, per step ({args.blocks} blocks of {BLOCK}): no capsule {f['fit_none_ms']:.3f} ms, "
            f"NanCapsule {pct['fit_ratio']} (quartiles of the blocks' ratios {pct['fit_q1']} .. {pct['fit_q3']})"
        )
        print(
            f"      train function alone ({calls} calls each, alternating): no capsule p10 "
            f"{f['call_none_us']:.0f} us, NanCapsule p10 {pct['call_p10_ratio']}, median {pct['call_median_ratio']}"
        )
        print(
            f"      host per step: batch hook + bookkeeping {f['hooks_us']:.2f} us; trigger counter read "
            f"{f['read_us']:.0f} us every check_every steps = {f['read_per_step_us']:.1f} us a step"
        )


if __name__ == "__main__":
    main()

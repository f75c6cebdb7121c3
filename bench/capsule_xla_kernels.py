"""NanCapsule under XLA (#35), kernel by kernel: the compiled step's own thunks (XLA:CPU's fusions, dots, copies,
the check's `conditional`) timed by TensorFlow's profiler, NanCapsule(layer_history=0) against the same model with
`jit_compile=True` and no capsule. The whole call's CPU time (bench/capsule_xla.py) moves by ±5 % from run to run on
a shared host; a kernel's time moves far less, so what the capsule adds to the device's work shows here.

    XLA_FLAGS is set by the script:  .venv/bin/python bench/capsule_xla_kernels.py [--kind mlp|conv] [--steps 300]

One process, two copies of the model; each `fit` of --steps steps in turn under the profiler (--windows windows
each, the order reversed every other), XLA:CPU's per-thunk trace events (`--xla_cpu_enable_xprof_traceme`). Per
setting: the kernels' time a step (the sum of the thunks, the conditional's own event left out: its branch's thunks
are counted; each thunk's median time), median over the windows; then, per kind of kernel (`MatMul`, `dot`,
`wrapped_reduce-window`, ...: names as in the optimized HLO, `--xla_dump_to` shows them), what the capsule's step
spends beyond the plain one.
"""

from __future__ import annotations

import argparse
import collections
import glob
import os
import re
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_enable_xprof_traceme=true").strip()


def kernels(logdir: str, steps: int) -> collections.Counter:
    """Kind of thunk -> µs a step, from the profile's XPlane (the events of the intra-op threads, where XLA:CPU runs
    its thunks): each thunk's median time times its calls a step (a thread preempted by the host's other jobs inside
    a thunk would count in a sum), summed per kind (the name without its number: one HLO's `MatMul.20` is the other's
    `MatMul.32`)."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2  # the profile's own format (no public reader)

    space = xplane_pb2.XSpace()
    with open(glob.glob(os.path.join(logdir, "**", "*.xplane.pb"), recursive=True)[0], "rb") as f:
        space.ParseFromString(f.read())
    times: dict[str, list[float]] = collections.defaultdict(list)
    for plane in space.planes:
        for line in plane.lines:
            if "Eigen" not in line.name:  # the intra-op pool: XLA:CPU's thunks
                continue
            for event in line.events:
                name = plane.event_metadata[event.metadata_id].name
                if not name.startswith(("ThunkExecutor", "end:", "nan_capsule_check")):
                    times[name].append(event.duration_ps / 1e6)
    total: collections.Counter = collections.Counter()
    for name, durations in times.items():
        total[re.sub(r"\.\d+$", "", name)] += statistics.median(durations) * len(durations) / steps
    return total


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", default="mlp")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--windows", type=int, default=4)
    args = p.parse_args()
    import tensorflow as tf
    from capsule_xla import two_models

    from tensorboard_plugin_dbg.capsule import NanCapsule

    plain, watched, data = two_models(args.kind)
    folder = tempfile.mkdtemp(prefix="capsule-xla-kernels-")
    try:
        runs = {"none": (plain, []), "capsule": (watched, [NanCapsule(folder, layer_history=0)])}
        for model, extra in runs.values():  # traced and compiled, outside the windows
            model.fit(data, steps_per_epoch=20, epochs=1, verbose=0, callbacks=extra)
        per_step: dict[str, list[collections.Counter]] = {name: [] for name in runs}
        for window in range(args.windows):
            for name in list(runs) if window % 2 == 0 else list(runs)[::-1]:
                model, extra = runs[name]
                logdir = tempfile.mkdtemp(prefix="capsule-xla-kernels-profile-")
                try:
                    tf.profiler.experimental.start(logdir)
                    model.fit(data, steps_per_epoch=args.steps, epochs=1, verbose=0, callbacks=extra)
                    tf.profiler.experimental.stop()
                    found = kernels(logdir, args.steps)
                finally:
                    shutil.rmtree(logdir, ignore_errors=True)
                per_step[name].append(found)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    sums = {name: statistics.median(sum(c.values()) for c in counts) for name, counts in per_step.items()}
    print(
        f"{args.kind}, XLA, kernels' time a step (median of {args.windows} windows of {args.steps} steps; load "
        f"{os.getloadavg()[0]:.1f}): no capsule {sums['none']:.1f} us, NanCapsule {sums['capsule']:.1f} us "
        f"({sums['capsule'] - sums['none']:+.1f} us, {100 * (sums['capsule'] / sums['none'] - 1):+.1f} %)"
    )

    def median(name: str, kernel: str) -> float:
        return statistics.median(c.get(kernel, 0.0) for c in per_step[name])

    names = set().union(*per_step["capsule"])
    extra = sorted(((median("capsule", k) - median("none", k), k) for k in names), reverse=True)
    print(
        "  per kind, the capsule's step beyond the plain one (us a step): "
        + ", ".join(f"{k} {d:+.2f}" for d, k in extra if abs(d) > 0.2)
    )


if __name__ == "__main__":
    main()

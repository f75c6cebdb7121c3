"""JAX writer (#41), device side: the instrumented program alone (no writer thread, no records) against plain `jit`
and `checkify(float_checks)`, on bench/jax_overhead.py's models, in one process.

    .venv/bin/python bench/jax_program.py [--model conv] [--blocks 60]

The settings take turns by blocks of 10 steps after 3 warm-up blocks: plain `jit`, checkify (its error checked each
step), the recording jit's instrumented program called directly (`RecordedJit._jitted`: the counts computed and
returned, never read), and the same program traced with every tensor counted in its logical axis order (`as-is`: the
counting before count_order.py, for a same-run before/after). Printed per setting: wall time (median, and the median
over rounds of each block over that round's plain block) and the process's CPU time per step (user + system, every
thread: XLA:CPU runs a fusion on both cores, so on a 2-core host shared with a writer thread the CPU time is what a
setting takes from the rest), each over plain's. A shared host moves the wall ratios; the CPU ratios hold better.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

WARMUP, BLOCK = 3, 10


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=("conv", "mlp"), default="conv")
    ap.add_argument("--blocks", type=int, default=60)
    args = ap.parse_args()
    import jax
    import jax_overhead
    from jax.experimental import checkify

    from tensorboard_plugin_dbg.jax import count_order, enable_dump_debug_info
    from tensorboard_plugin_dbg.jax.eager import unrecorded

    plain_jit = jax.jit
    with tempfile.TemporaryDirectory() as tmp:
        writer = enable_dump_debug_info(os.path.join(tmp, "dump"), circular_buffer_size=-1)
        params, batch = jax_overhead._model(args.model, jax.random.PRNGKey(0))
        loss_fn = jax_overhead._mlp_loss if args.model == "mlp" else jax_overhead._conv_loss

        def step(p, x, y):  # noqa: ANN001, ANN202 - pytrees of jax arrays
            loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
            return jax.tree_util.tree_map(lambda a, g: a - 0.01 * g, p, grads), loss

        checked = plain_jit(checkify.checkify(step, errors=checkify.float_checks))

        def run_checkify(p, x, y):  # noqa: ANN001, ANN202
            err, out = checked(p, x, y)
            err.throw()
            return out

        runs = {"plain": plain_jit(step), "checkify": run_checkify}
        oriented = count_order.CountOrders.oriented
        for name in ("program", "as-is"):
            count_order.CountOrders.oriented = oriented if name == "program" else (lambda self, x: x)
            recorded = jax.jit(step)  # the recording jit: traced (and its program compiled) at its first call
            recorded(params, *batch)
            runs[name] = recorded._jitted
        count_order.CountOrders.oriented = oriented
        writer.flush()
        wall, cpu = _timed(runs, params, batch, args.blocks, unrecorded)
    print(f"{args.model}: {args.blocks} blocks of {BLOCK} steps; load (1/5/15 min) {_load()}")
    print(f"{'setting':9} {'ms/step':>8} {'wall/plain':>10} {'paired':>7} {'cpu/plain':>9}")
    for name in runs:
        paired = statistics.median(a / b for a, b in zip(wall[name], wall["plain"], strict=True))
        ratio = statistics.median(wall[name]) / statistics.median(wall["plain"])
        cpu_ratio = sum(cpu[name]) / sum(cpu["plain"])
        print(f"{name:9} {statistics.median(wall[name]) * 1e3:8.3f} {ratio:9.2f}x {paired:6.2f}x {cpu_ratio:8.2f}x")


def _timed(runs, params, batch, blocks, unrecorded):  # noqa: ANN001, ANN202 - bench plumbing
    import jax

    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    with unrecorded():  # the writer records jitted calls process-wide: not these
        for block in range(WARMUP + blocks):
            for name, run in runs.items():
                t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
                for _ in range(BLOCK):
                    out = run(params, *batch)
                jax.block_until_ready(out)
                r1 = resource.getrusage(resource.RUSAGE_SELF)
                if block >= WARMUP:
                    wall[name].append((time.perf_counter() - t0) / BLOCK)
                    cpu[name].append((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) / BLOCK)
    return wall, cpu


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()

"""JAX writer (#41): what recording a jitted training step costs, against JAX's own NaN tools, paired step by step.

    .venv/bin/python bench/jax_overhead.py [--steps 300]

On a jitted MLP (784-256-256-10, batch 128) and a small conv net (two 3x3 convs 16/32 channels on 28x28, batch 32,
a dense head), plain SGD steps, CPU. One process per (model, writer mode): it keeps `jax.jit` as it was before
`enable_dump_debug_info` (the writer replaces it for the whole process) and runs, step after step in turn, plain
`jit`, the writer (FULL_HEALTH or CURT_HEALTH, streaming, circular_buffer_size=-1), `checkify.checkify(step,
errors=checkify.float_checks)` jitted (its error checked each step, as a user must) and plain jit under
`jax_debug_nans`. The settings take turns by blocks of BLOCK consecutive steps (the writer writes a call's records on
its own thread while the next step runs: a block ends when its last step's result is ready and, for the writer, its
records are written), so each ratio to plain is a paired one: a busy host slows all four alike. Printed per setting:
the median step time (block time / BLOCK) and the ratio to plain of the medians and of the 10th percentiles (the
quietest blocks), after WARMUP warm-up blocks, and "paired": the median over rounds of each round's block time over
that round's plain block (the blocks run one after the other: on a shared host the steadiest of the three). The
data are finite: the price paid on every healthy step.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETTINGS = ("plain", "writer", "checkify", "debug_nans")
MODES = ("FULL_HEALTH", "CURT_HEALTH")
MODELS = ("mlp", "conv")
WARMUP = 3  # blocks
BLOCK = 10  # steps


def _child(model: str, mode: str, steps: int, dump_dir: str) -> dict[str, list[float]]:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    from jax.experimental import checkify

    from tensorboard_plugin_dbg.jax import enable_dump_debug_info
    from tensorboard_plugin_dbg.jax.eager import unrecorded

    plain_jit = jax.jit  # kept before the writer replaces jax.jit
    writer = enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    params, batch = _model(model, jax.random.PRNGKey(0))
    loss_fn = _mlp_loss if model == "mlp" else _conv_loss

    def step(p, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        return jax.tree_util.tree_map(lambda a, g: a - 0.01 * g, p, grads), loss

    checked = plain_jit(checkify.checkify(step, errors=checkify.float_checks))

    def run_checkify(p, x, y):
        err, out = checked(p, x, y)
        err.throw()
        return out

    plain, nans = plain_jit(step), plain_jit(step)

    def run_debug_nans(p, x, y):
        with jax.debug_nans(True):
            return nans(p, x, y)

    def unseen(run):  # noqa: ANN001, ANN202 - the writer records eager ops and jitted calls process-wide: not these
        def call(*args):  # noqa: ANN002, ANN202
            with unrecorded():
                return run(*args)

        return call

    runs = {"plain": unseen(plain), "writer": jax.jit(step)}
    runs.update(checkify=unseen(run_checkify), debug_nans=unseen(run_debug_nans))
    state = dict.fromkeys(runs, params)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(WARMUP + max(steps // BLOCK, 2)):
        for name, run in runs.items():
            t0 = time.perf_counter()
            for _ in range(BLOCK):
                state[name], loss = run(state[name], *batch)
            jax.block_until_ready(loss)
            if name == "writer":
                writer.flush()  # its records written too
            times[name].append((time.perf_counter() - t0) / BLOCK)
    return {name: t[WARMUP:] for name, t in times.items()}


def _model(model: str, key):  # noqa: ANN202 - pytrees of jax arrays
    import jax

    k = jax.random.split(key, 6)
    if model == "mlp":
        sizes = [(784, 256), (256, 256), (256, 10)]
        params = [(jax.random.normal(k[i], s) * 0.05, jax.numpy.zeros(s[1])) for i, s in enumerate(sizes)]
        return params, (jax.random.normal(k[4], (128, 784)), jax.random.randint(k[5], (128,), 0, 10))
    params = {
        "c1": jax.random.normal(k[0], (16, 1, 3, 3)) * 0.1,
        "c2": jax.random.normal(k[1], (32, 16, 3, 3)) * 0.05,
        "d": jax.random.normal(k[2], (32 * 7 * 7, 10)) * 0.01,
    }
    return params, (jax.random.normal(k[4], (32, 1, 28, 28)), jax.random.randint(k[5], (32,), 0, 10))


def _xent(logits, y):  # noqa: ANN001, ANN202
    import jax

    return -jax.numpy.mean(jax.nn.log_softmax(logits)[jax.numpy.arange(y.shape[0]), y])


def _mlp_loss(params, x, y):  # noqa: ANN001, ANN202
    import jax

    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return _xent(x @ w + b, y)


def _conv_loss(params, x, y):  # noqa: ANN001, ANN202
    import jax

    conv = jax.lax.conv_general_dilated
    h = jax.nn.relu(conv(x, params["c1"], (2, 2), "SAME"))
    h = jax.nn.relu(conv(h, params["c2"], (2, 2), "SAME"))
    return _xent(h.reshape(h.shape[0], -1) @ params["d"], y)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--child", nargs=3, metavar=("MODEL", "MODE", "STEPS"))
    args = ap.parse_args()
    if args.child:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(_child(args.child[0], args.child[1], int(args.child[2]), os.path.join(tmp, "dump"))))
        return
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), JAX_PLATFORMS="cpu")
    print(
        f"{'model':6} {'writer mode':12} {'setting':11} {'ms/step':>8} {'median/plain':>13} {'p10/plain':>10}"
        f" {'paired':>7}"
    )
    print(f"host load (1/5/15 min) at start: {_load()}")  # a shared host: the paired ratios hold, the times do not
    for model in MODELS:
        for mode in MODES:
            cmd = [sys.executable, __file__, "--child", model, mode, str(args.steps)]
            out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True, timeout=900).stdout
            times = json.loads(out.strip().splitlines()[-1])
            med = {k: statistics.median(v) for k, v in times.items()}
            p10 = {k: statistics.quantiles(v, n=10)[0] for k, v in times.items()}
            for setting in SETTINGS:
                if mode != MODES[0] and setting in ("checkify", "debug_nans"):
                    continue  # the same as in the first mode's process
                ratio, quiet = med[setting] / med["plain"], p10[setting] / p10["plain"]
                paired = statistics.median(a / b for a, b in zip(times[setting], times["plain"], strict=True))
                print(
                    f"{model:6} {mode:12} {setting:11} {med[setting] * 1e3:8.2f} {ratio:12.2f}x {quiet:9.2f}x"
                    f" {paired:6.2f}x"
                )
    print(f"host load (1/5/15 min) at end: {_load()}")


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()

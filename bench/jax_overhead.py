"""JAX writer (#41): what recording a jitted training step costs, against JAX's own NaN tools.

    .venv/bin/python bench/jax_overhead.py [--steps 300] [--reps 2]

On a jitted MLP (784-256-256-10, batch 128) and a small conv net (two 3x3 convs 16/32 channels on 28x28, batch 32,
a dense head), plain SGD steps, CPU: step time of plain `jax.jit`, of the writer in FULL_HEALTH and in CURT_HEALTH
(`tensorboard_plugin_dbg.jax.enable_dump_debug_info`, streaming, circular_buffer_size=-1), of
`checkify.checkify(step, errors=checkify.float_checks)` jitted (its error checked each step, as a user must), and of
plain jit under `jax_debug_nans`. Each (model, setting) runs in its own process (the writer replaces jax.jit for the
whole process), the settings interleaved --reps times; the figure is the median over the reps of each run's median
step time after 20 warm-up steps. The data are finite: this is the price paid on every healthy step.
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
SETTINGS = ("plain", "writer_full_health", "writer_curt_health", "checkify", "debug_nans")
MODELS = ("mlp", "conv")
WARMUP = 20


def _child(model: str, setting: str, steps: int, dump_dir: str) -> None:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    if setting.startswith("writer_"):
        from tensorboard_plugin_dbg.jax import enable_dump_debug_info

        mode = "FULL_HEALTH" if setting == "writer_full_health" else "CURT_HEALTH"
        enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    if setting == "debug_nans":
        jax.config.update("jax_debug_nans", True)
    import jax.numpy as jnp
    from jax.experimental import checkify

    key = jax.random.PRNGKey(0)
    params, batch = _model(model, key)
    loss_fn = _mlp_loss if model == "mlp" else _conv_loss

    def step(p, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        return jax.tree_util.tree_map(lambda a, g: a - 0.01 * g, p, grads), loss

    if setting == "checkify":
        checked = jax.jit(checkify.checkify(step, errors=checkify.float_checks))

        def run(p, x, y):
            err, out = checked(p, x, y)
            err.throw()
            return out

    else:
        run = jax.jit(step)
    times = []
    for _ in range(WARMUP + steps):
        t0 = time.perf_counter()
        params, loss = run(params, *batch)
        jnp.asarray(loss).block_until_ready()
        times.append(time.perf_counter() - t0)
    print(json.dumps({"ms": statistics.median(times[WARMUP:]) * 1e3, "loss": float(loss)}))


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
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--child", nargs=3, metavar=("MODEL", "SETTING", "STEPS"))
    args = ap.parse_args()
    if args.child:
        with tempfile.TemporaryDirectory() as tmp:
            _child(args.child[0], args.child[1], int(args.child[2]), os.path.join(tmp, "dump"))
        return
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), JAX_PLATFORMS="cpu")
    results: dict[str, dict[str, list[float]]] = {m: {s: [] for s in SETTINGS} for m in MODELS}
    for _ in range(args.reps):
        for model in MODELS:
            for setting in SETTINGS:
                cmd = [sys.executable, __file__, "--child", model, setting, str(args.steps)]
                out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True, timeout=600).stdout
                results[model][setting].append(json.loads(out.strip().splitlines()[-1])["ms"])
    print(f"{'model':6} {'setting':20} {'ms/step':>9} {'vs plain':>9}")
    for model in MODELS:
        plain = statistics.median(results[model]["plain"])
        for setting in SETTINGS:
            ms = statistics.median(results[model][setting])
            print(f"{model:6} {setting:20} {ms:9.2f} {ms / plain:8.2f}x")


if __name__ == "__main__":
    main()

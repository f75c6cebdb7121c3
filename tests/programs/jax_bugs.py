"""The same five bugs as tests/programs/tf_bugs.py, in jitted JAX, recorded by tensorboard_plugin_dbg.jax.
The line `report` must name is marked CULPRIT-<bug>. Args: DUMP_DIR [BUG (float16)] [MODE]."""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import _twin_data
import jax
import jax.numpy as jnp

from tensorboard_plugin_dbg.jax import enable_dump_debug_info

bug = sys.argv[2] if len(sys.argv) > 2 else "float16"
enable_dump_debug_info(sys.argv[1], tensor_debug_mode=sys.argv[3] if len(sys.argv) > 3 else "FULL_HEALTH")


def softmax_log(w, x):
    probs = jax.nn.softmax(x @ w)
    return -jnp.mean(jnp.log(probs))  # CULPRIT-softmax_log


def sqrt_backward(w, x):
    norm = jnp.sqrt(jnp.sum((w * x) ** 2))  # CULPRIT-sqrt_backward
    return norm


def where_grad(w, x):
    z = w * x  # zero where x is zero: log(0) is masked forward, 0 / 0 = NaN backward
    return jnp.sum(jnp.where(z > 0, jnp.log(z), 0.0))  # CULPRIT-where_grad


def data_nan(w, x):
    pred = x @ w  # CULPRIT-data_nan
    return jnp.mean(pred * pred)


def float16(w, x):
    half = (w * x).astype(jnp.float16)
    squared = half * half  # CULPRIT-float16
    return jnp.sum(squared.astype(jnp.float32))


LOSS = {"softmax_log": softmax_log, "sqrt_backward": sqrt_backward, "where_grad": where_grad, "data_nan": data_nan}
LOSS["float16"] = float16


@jax.jit
def train_step(w, x):
    loss, grad = jax.value_and_grad(LOSS[bug])(w, x)
    return w - 0.01 * grad, loss


w = jnp.ones(3) if bug not in ("softmax_log", "data_nan") else jnp.array([[1.0, -1.0]] * 3)
for x in _twin_data.batches(bug):
    w, loss = train_step(w, x)
    print(float(loss))

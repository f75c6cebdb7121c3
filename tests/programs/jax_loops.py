"""A jitted function with a `while_loop` and a `cond`, recorded by tensorboard_plugin_dbg.jax: the loop's body and
each branch are graphs of their own. Args: DUMP_DIR [MODE [WHERE]] (default FULL_HEALTH, while), WHERE "while" (the
body's sqrt turns NaN at the 3rd iteration of 5) or "cond" (the loop runs 2 healthy iterations; the branch taken
takes the log of a negative number, the other branch would not) or "late" (a loop of 150 iterations whose sqrt turns
NaN at the 121st: past the 100 iterations the writer traces)."""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax
import jax.numpy as jnp

from tensorboard_plugin_dbg.jax import enable_dump_debug_info

enable_dump_debug_info(sys.argv[1], tensor_debug_mode=(sys.argv[2:3] or ["FULL_HEALTH"])[0])
WHERE = (sys.argv[3:4] or ["while"])[0]
ITERATIONS = {"while": 5, "cond": 2, "late": 150}[WHERE]


def shrink(state):
    i, h = state
    return i + 1, jnp.sqrt(h) - 1.0  # CULPRIT while: sqrt of the carry, negative at the 3rd iteration


def risky(a):
    return jnp.log(a - 4.0)  # CULPRIT cond: log of a negative number, in the branch taken


def safe(a):
    return jnp.exp(a)


def drain(state):
    i, h, total = state
    return i + 1, h - 1.0, total + jnp.sqrt(h)  # CULPRIT late: h goes negative at the 121st iteration


@jax.jit
def run(x):
    if WHERE == "late":
        _, _, total = jax.lax.while_loop(lambda s: s[0] < ITERATIONS, drain, (0, x, jnp.zeros_like(x)))
        return total.sum()
    _, h = jax.lax.while_loop(lambda s: s[0] < ITERATIONS, shrink, (0, x))
    if WHERE == "while":
        return h.sum()
    return jax.lax.cond(x.sum() > 0, risky, safe, x).sum() + h.sum() * 0.0


START = {"while": [2.5, 9.0], "cond": [3.0, 30.0], "late": [119.5, 400.0]}[WHERE]
print(run(jnp.array(START)))

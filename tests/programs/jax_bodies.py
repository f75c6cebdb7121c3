"""A jitted function with a scan, a custom_vjp and a custom_jvp (jax.nn.relu), recorded by tensorboard_plugin_dbg.jax:
their bodies are graphs of their own; the scan's body is recorded at each iteration. Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax
import jax.numpy as jnp

from tensorboard_plugin_dbg.jax import enable_dump_debug_info

enable_dump_debug_info(sys.argv[1], tensor_debug_mode=sys.argv[2] if len(sys.argv) > 2 else "FULL_HEALTH")


@jax.custom_vjp
def clipped(x):
    return jnp.clip(x, -1.0, 1.0)


clipped.defvjp(lambda x: (clipped(x), x), lambda x, g: (g,))


def cell(h, x):
    h = jnp.tanh(h * 0.5 + x)
    return h, jnp.log(h)  # CULPRIT: log of a negative h at the 3rd iteration


@jax.jit
def run(xs):
    h, ys = jax.lax.scan(cell, jnp.zeros(2), xs)
    return clipped(ys).sum() + jax.nn.relu(h).sum()


xs = jnp.array([[1.0, 1.0], [1.0, 2.0], [-5.0, 1.0], [1.0, 1.0]])
print(run(xs))

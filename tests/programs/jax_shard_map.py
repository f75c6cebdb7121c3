"""A jitted step whose `shard_map` body takes the log of a value that goes to 0 on the second device's shard only,
recorded by tensorboard_plugin_dbg.jax on 2 CPU devices. Args: DUMP_DIR [MODE [AXES [CHECK [MAP]]]] (default
FULL_HEALTH, auto, check, shard_map): AXES "auto" or "explicit" (jax.make_mesh's default axis types, the mesh set as
the context's), CHECK "check" or "nocheck" (shard_map's check_vma), MAP "shard_map", "pmap" (the same body under
`jax.pmap` inside the jit), "passed" (the value that goes to 0 is made by the caller and passed in: the body's
log reads its input), "loop" (the log is taken in a while loop's body inside the shard_map body, at its 1st
iteration) or "toplevel" (the pmap called at top level, outside any jit)."""

import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from tensorboard_plugin_dbg.jax import enable_dump_debug_info

enable_dump_debug_info(sys.argv[1], tensor_debug_mode=(sys.argv[2:3] or ["FULL_HEALTH"])[0])
AXES, CHECK, MAP = (sys.argv[3:] + ["auto", "check", "shard_map"][len(sys.argv[3:]) :])[:3]
explicit = jax.sharding.AxisType.Explicit if AXES == "explicit" else jax.sharding.AxisType.Auto
mesh = jax.make_mesh((2,), ("x",), axis_types=(explicit,))
if AXES == "explicit":
    jax.sharding.set_mesh(mesh)


def per_shard(x, w):
    h = x * w - 1.0  # 0 at the second shard's first element
    return lax.psum(jnp.log(h).sum(), "x")  # CULPRIT shard_map


def per_device(x, w):
    h = x * w - 1.0
    return lax.psum(jnp.log(h).sum(), "x")  # CULPRIT pmap


def of_passed(h):
    return lax.psum(jnp.log(h).sum(), "x")  # CULPRIT passed


def looped(x, w):
    h = x * w - 1.0
    _, h = lax.while_loop(lambda s: s[0] < 2, lambda s: (s[0] + 1, jnp.log(s[1]) * w), (0, h))  # CULPRIT loop
    return lax.psum(h.sum(), "x")


@jax.jit
def step(x, w):
    if MAP == "loop":
        return jax.shard_map(looped, mesh=mesh, in_specs=(P("x"), P()), out_specs=P(), check_vma=CHECK == "check")(x, w)
    if MAP == "passed":
        mapped = jax.shard_map(of_passed, mesh=mesh, in_specs=P("x"), out_specs=P(), check_vma=CHECK == "check")
        return mapped(x * w - 1.0)
    if MAP == "pmap":
        return jax.pmap(per_device, axis_name="x", in_axes=(0, None))(x.reshape(2, 2), w)[0]
    mapped = jax.shard_map(per_shard, mesh=mesh, in_specs=(P("x"), P()), out_specs=P(), check_vma=CHECK == "check")
    return mapped(x, w) * 2.0


x = jax.device_put(jnp.array([3.0, 4.0, 0.5, 5.0]), NamedSharding(mesh, P("x")))
if MAP == "toplevel":
    print(jax.pmap(per_device, axis_name="x", in_axes=(0, None))(x.reshape(2, 2), jnp.float32(2.0)))
else:
    print(step(x, jnp.float32(2.0)))

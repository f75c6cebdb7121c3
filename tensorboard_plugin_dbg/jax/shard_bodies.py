"""`shard_map` bodies recorded as graphs of their own, their figures those of the whole mesh (#41).

JAX's own tools name only the call site inside `shard_map`/`pmap` (jax-ml/jax#26796, #25643). Here the body is
interpreted by its own Instrumenter (instrument.py) inside a `jax.shard_map` of the same mesh, specs and check_vma,
so each of its equations is an op of graph `<caller>.shard_map_<n>` (linked from the caller's op as a nested `jit`
is: that op's type is the graph's name, its inputs the tensors passed in). `pmap` inside `jit` is a `shard_map` to
JAX 0.10 (over `_internal_pmap_axis_name`): recorded the same way.

Each device computes the counts of its own shard; they are summed over the body's manual mesh axes (`psum`), so a
trace describes the whole logical tensor, as FULL_HEALTH describes any tensor, and a NaN on one device is counted
whichever device holds it. A value that JAX knows is the same on every device of an axis (check_vma=True: it does
not vary over that axis) is counted once, not once per copy; its shape is its own. A value that varies over axes
of k devices in all is recorded as its k shards stacked on a leading axis, shape (k, *shard shape), in the mesh's
device order (FULL_TENSOR writes exactly that array). With check_vma=False JAX does not track what varies: every
value is taken to vary over all the body's axes (a replicated one then counts each device's copy). Loops inside the
body: an iteration traced on any device is traced, each loop's iteration counts are the largest device's.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend import core as jcore
from jax.sharding import PartitionSpec

from ..writer.trace_batch import TracePoint
from .bodies import Params


def varying(x: Any) -> frozenset[Any]:
    """The manual mesh axes `x` varies over, as JAX's type checking (check_vma) tracks them."""
    aval = jax.typeof(x)
    mat = getattr(aval, "mat", None)  # JAX 0.10; `vma` before
    found: Any = mat.varying if mat is not None else getattr(aval, "vma", None)
    return frozenset(found or ())


def noting_axes(inst: Any, axes_of: dict[tuple[str, str, int], frozenset[Any]]) -> Any:
    """`inst` (an Instrumenter), and every child it makes for a body inside, noting in `axes_of` the axes each
    point's value varies over, by (graph id, op name, slot). Its methods are wrapped per instance: this module is
    one that instrument.py imports."""
    plain_watch, plain_child = inst.watch, inst.child

    def watch(graph_id: str, op_name: str, op_type: str, slot: int, tensor_id: int, x: Any, *a: Any, **k: Any) -> None:
        axes_of[(graph_id, op_name, slot)] = varying(x)
        plain_watch(graph_id, op_name, op_type, slot, tensor_id, x, *a, **k)

    inst.watch, inst.child = watch, lambda: noting_axes(plain_child(), axes_of)
    return inst


def run_shard_map(inst: Any, params: Params, invals: list[Any], name: str, outer_id: str) -> list[Any]:
    """A `shard_map` equation whose body is recorded as graph `name` (see the module docstring)."""
    mesh, check = params["mesh"], bool(params["check_vma"])
    manual = tuple(a for a in mesh.axis_names if a in params["newly_manual_axes"])
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes, strict=True))
    jaxpr = params["jaxpr"]
    closed = jaxpr if isinstance(jaxpr, jcore.ClosedJaxpr) else jcore.ClosedJaxpr(jaxpr, ())
    axes_of: dict[tuple[str, str, int], frozenset[Any]] = {}
    sub = noting_axes(inst.child(), axes_of)

    def body(*args: Any) -> Any:
        _, outs = sub.run_graph(closed, list(args), name, outer_id)
        payload, live, loops = sub.payload(), sub.live_vector(), sub.loops.payload()
        if inst.mode == "FULL_TENSOR":  # each device's shard, on a leading axis over every manual axis
            payload = [_varying_over(jnp.asarray(v)[None], manual, check) for v in payload]
        else:
            payload = lax.psum(payload, manual)
        return (
            tuple(outs),
            payload,
            None if live is None else lax.pmax(live, manual),
            tuple(lax.pmax(v, manual) for v in loops),
        )

    every = PartitionSpec(manual) if inst.mode == "FULL_TENSOR" else PartitionSpec()
    outs, payload, live, loops = jax.shard_map(
        body,
        mesh=mesh,
        in_specs=tuple(params["in_specs"]),
        out_specs=(tuple(params["out_specs"]), every, PartitionSpec(), PartitionSpec()),
        axis_names=set(manual),
        check_vma=check,
    )(*invals)
    # the axes each point's shards are stacked over: those its value varies over (all, where JAX does not track it)
    stacked = [
        tuple(a for a in manual if not check or a in axes_of.get((p.graph_id, p.op_name, p.slot), manual))
        for p in sub.points
    ]
    if inst.mode == "FULL_TENSOR":
        payload = [_distinct(t, manual, sizes, axes) for t, axes in zip(payload, stacked, strict=True)]
    elif stacked and np.size(payload):  # a health mode's counts, len(points) x width
        payload = _once_per_copy(payload, stacked, manual, sizes, int(np.size(payload)) // len(stacked), inst.mode)
    points = [_stacked_point(p, axes, sizes) for p, axes in zip(sub.points, stacked, strict=True)]
    inst.adopt(points, payload, live)
    inst.loops.adopt(sub.loops.points, loops)
    return list(outs)


def _varying_over(x: Any, axes: tuple[Any, ...], check: bool) -> Any:
    """`x` typed as varying over every one of `axes` (so one out_spec over them all fits it)."""
    missing = tuple(a for a in axes if a not in varying(x)) if check else ()
    return lax.pcast(x, missing, to="varying") if missing else x


def _distinct(stacked: Any, manual: tuple[Any, ...], sizes: dict[Any, int], axes: tuple[Any, ...]) -> Any:
    """One device's shard per distinct value: `stacked` (every device's, in mesh order) indexed at 0 along the
    axes the value does not vary over; (k, *shard shape), or the shard's own shape where k is 1."""
    grid = stacked.reshape(*(sizes[a] for a in manual), *stacked.shape[1:])
    grid = grid[tuple(slice(None) if a in axes else 0 for a in manual)]
    return grid.reshape(-1, *stacked.shape[1:]) if axes else grid


def _once_per_copy(
    summed: Any, stacked: list[tuple[Any, ...]], manual: tuple[Any, ...], sizes: dict[Any, int], width: int, mode: str
) -> Any:
    """The counts summed over every device, each value's copies counted once: divided by the number of devices
    holding the same shard (exact: they all counted the same); CURT_HEALTH's flag kept 0 or 1."""
    copies = [int(np.prod([sizes[a] for a in manual if a not in axes], dtype=np.int64)) for axes in stacked]
    divisor = np.repeat(np.asarray(copies, np.int32), width)
    counts = summed // divisor if divisor.size and divisor.max() > 1 else summed
    return jnp.minimum(counts, 1) if mode == "CURT_HEALTH" else counts


def _stacked_point(p: TracePoint, axes: tuple[Any, ...], sizes: dict[Any, int]) -> TracePoint:
    """The point of a body tensor as recorded: its k distinct shards stacked, shape (k, *shard shape)."""
    k = int(np.prod([sizes[a] for a in axes], dtype=np.int64))
    return dataclasses.replace(p, shape=(k, *p.shape)) if k > 1 else p

"""`while_loop` bodies and `cond`/`switch` branches recorded as graphs of their own, at every run (#41 item 2).

Each body or branch is interpreted by its own Instrumenter (instrument.py) once, to a jaxpr that returns its outputs,
its payload (counts, or tensors in FULL_TENSOR) and a liveness vector (1 per recorded tensor that ran); that jaxpr
then runs inside the real loop or switch. A while loop's iteration count is only known when it ran, so each of its
first WHILE_ITERATIONS iterations writes its payload into a row of a carried buffer, its liveness too (rows of
iterations that never ran stay 0); a switch's branch returns every branch's payload, the branches not taken as zeros
with liveness 0. The host writes the traces of live points only: a body's traces repeat once per iteration that ran,
in order (a NaN born at the 3rd is "its 3rd trace"), and only the branch taken is traced. Iterations past
WHILE_ITERATIONS are not traced (the while op's outputs still are); how many ran is written beside the while op
(iterations.py). A while's condition function runs unrecorded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax
from jax.extend import core as jcore

# a jaxpr equation's params, as JAX hands them (open by JAX's design: jaxprs, shapes, flags)
Params = dict[str, Any]
WHILE_ITERATIONS = 100  # a while body's iterations recorded per call (a carried buffer of this many payloads)


def _zeros(tree: Any, rows: tuple[int, ...] = ()) -> Any:
    return jax.tree_util.tree_map(lambda s: _varying_as(jnp.zeros((*rows, *s.shape), s.dtype), s), tree)


def _varying_as(x: Any, like: Any) -> Any:
    """`x` varying over the shard_map mesh axes `like` varies over (a loop's carry keeps its type)."""
    axes = tuple(getattr(getattr(like, "manual_axis_type", None), "varying", None) or ())
    return lax.pcast(x, axes, to="varying") if axes else x


def _instrumented(inst: Any, closed: Any, name: str, outer_id: str) -> tuple[Any, Callable[..., Any], Any]:
    """`closed` interpreted once as graph `name` by a child of `inst`: (the child, a function of the body's
    inputs returning (outputs, payload, liveness), the shapes of what it returns)."""
    sub = inst.child()

    def body(*args: Any) -> Any:
        _, outs = sub.run_graph(closed, list(args), name, outer_id, body=True)
        live = sub.live_vector()
        alive = jnp.ones(len(sub.points), jnp.int32) if live is None else live
        return outs, sub.payload(), alive, sub.loops.payload()

    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type, **_manual(a)) for a in closed.in_avals]
    traced, shapes = jax.make_jaxpr(body, return_shape=True)(*specs)
    tree, run = jax.tree_util.tree_structure(shapes), jcore.jaxpr_as_fun(traced)
    return sub, lambda *args: jax.tree_util.tree_unflatten(tree, run(*args)), shapes


def _manual(aval: Any) -> Params:
    """Inside a shard_map body, the mesh axes a body input varies over (JAX 0.10's manual axis type): kept, or an op
    mixing it with a varying value fails check_vma."""
    mat = getattr(aval, "mat", None)
    varies = mat is not None and getattr(mat, "varying", None)
    return {"manual_axis_type": mat, "sharding": aval.sharding} if varies else {}


def run_while(inst: Any, params: Params, invals: list[Any], name: str, outer_id: str, caller_op: str = "") -> list[Any]:
    """A `while` equation (op `caller_op`) whose body is graph `name`, recorded at each of its first WHILE_ITERATIONS
    iterations; how many ran is counted by the loop itself and recorded (iterations.py)."""
    cn, bn = params["cond_nconsts"], params["body_nconsts"]
    cconsts, bconsts, init = invals[:cn], invals[cn : cn + bn], invals[cn + bn :]
    sub, body, (_, *shapes) = _instrumented(inst, params["body_jaxpr"], name, outer_id)
    test = jcore.jaxpr_as_fun(params["cond_jaxpr"])

    def step(state: Any) -> Any:
        i, carry, rows = state
        outs, *recorded = body(*bconsts, *carry)
        rows = jax.tree_util.tree_map(lambda r, v: r.at[i].set(v, mode="drop"), rows, recorded)
        return i + 1, list(outs), rows

    start = (jnp.int32(0), list(init), _zeros(shapes, (WHILE_ITERATIONS,)))
    ran, carry, rows = lax.while_loop(lambda s: test(*cconsts, *s[1])[0], step, start)
    for k in range(WHILE_ITERATIONS):
        payload, live, loops = jax.tree_util.tree_map(lambda r, k=k: r[k], rows)
        inst.adopt(sub.points, payload, live)
        inst.loops.adopt(sub.loops.points, loops)
    inst.loops.add(inst.writer, outer_id, name, caller_op, ran, WHILE_ITERATIONS)
    return list(carry)


def run_cond(inst: Any, params: Params, invals: list[Any], name: str, outer_id: str, _op: str = "") -> list[Any]:
    """A `cond` equation whose branches are graphs `name_branch_<b>`; only the branch taken is traced."""
    made = [_instrumented(inst, c, f"{name}_branch_{b}", outer_id) for b, c in enumerate(params["branches"])]

    def branch(b: int) -> Callable[..., Any]:
        def run(*operands: Any) -> Any:
            outs, *recorded = made[b][1](*operands)
            return list(outs), [tuple(recorded) if c == b else _zeros(tuple(m[2][1:])) for c, m in enumerate(made)]

        return run

    outs, recorded = lax.switch(invals[0], [branch(b) for b in range(len(made))], *invals[1:])
    for (sub, _, _), (payload, live, loops) in zip(made, recorded, strict=True):
        inst.adopt(sub.points, payload, live)
        inst.loops.adopt(sub.loops.points, loops)
    return list(outs)

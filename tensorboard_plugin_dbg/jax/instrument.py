"""A jitted function's jaxpr, re-run equation by equation inside the same `jit` trace, recorded as a graph.

Each equation becomes an op (the primitive as op type, `<name stack>/<primitive>_<index>` as op name, its
`source_info` traceback as creation stack); each floating output (any output in SHAPE and FULL_TENSOR) gets the
mode's counts computed in the compiled program, next to the value the program itself uses, so a NaN seen is the one
`jit` produces. A nested `jit` (pjit) equation is interpreted the same way as a graph of its own, whose
`outer_context_id` is the caller's graph and whose name is the calling op's type, as TensorFlow links function calls.
`scan` and `while` bodies and `cond` branches (bodies.py) and custom_jvp/custom_vjp bodies are graphs of their own
too, and shard_map bodies (shard_bodies.py: the counts summed over the mesh).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend import core as jcore

from ..writer import summaries
from ..writer.events import DebugEventsWriter
from ..writer.trace_batch import TracePoint
from . import bodies, frames, host_counts, shard_bodies
from .count_order import CountOrders
from .iterations import LoopCounts

CALL_PRIMITIVES = ("jit", "pjit")
CUSTOM_CALLS = ("custom_jvp_call", "custom_vjp_call")  # their primal body, as a nested graph (the gradient rule
# has been applied when the jaxpr was made: what runs is the body)
COUNT_WIDTH = {"CURT_HEALTH": 1, "CONCISE_HEALTH": 3, "FULL_HEALTH": 6}
# primitives whose output holds its input's elements, each the same number of times: its counts are the input's
# (times that number), so none is computed on it (a transposed tensor's counts also read memory out of order)
SAME_ELEMENTS = frozenset(
    ("transpose", "reshape", "squeeze", "expand_dims", "rev", "broadcast_in_dim", "copy", "copy_p", "stop_gradient")
)
_WIDENING = {("float16", "float32"), ("float16", "float64"), ("bfloat16", "float32"), ("bfloat16", "float64")}
_WIDENING |= {("float32", "float64")}
Point = TracePoint  # one recorded tensor: a graph op's output slot (or, with graph_id "", an output of the call)


SMALL = 4096  # elements: tensors this small are counted together, one reduction per size class (XLA:CPU pays a
# few microseconds per reduction whatever its size: a training step has dozens of biases, scalars and logits)
ZERO_COLUMN = {"CURT_HEALTH": None, "CONCISE_HEALTH": None, "FULL_HEALTH": 4}  # where padding zeros are counted


def rectified_counts(counts: Any, mode: str) -> Any:
    """The counts of max(x, 0) (a ReLU) from x's: -inf and negatives become zeros, NaN stays NaN (XLA's max
    propagates it), +inf and positives stay. Not for CURT_HEALTH (its flag cannot tell a -inf that goes away)."""
    if mode == "CONCISE_HEALTH":
        return counts * jnp.array([0, 1, 1], jnp.int32)
    ninf, pinf, nan, neg, zero, pos = (counts[i] for i in range(6))
    return jnp.stack([ninf * 0, pinf, nan, neg * 0, ninf + neg + zero, pos])


def _counted(masks: list[Any], rows: bool) -> list[Any]:
    """How many elements each boolean mask holds (per row of a matrix with `rows`), in ONE variadic reduction
    (separate jnp.sum calls make XLA:CPU walk the tensor once per count: ~200x slower on a training step's)."""
    flat = [m.astype(jnp.int32) for m in masks]
    zeros = [jnp.int32(0)] * len(flat)
    # over every axis of the tensor as it is, not of a flattened copy: a logical reshape of a tensor XLA lays out
    # otherwise (NCHW in the program, NHWC in memory) made each reduction read it transposed, strided (~3x slower)
    axes = (1,) if rows else tuple(range(np.ndim(masks[0])))
    return list(lax.reduce(flat, zeros, lambda a, b: tuple(u + v for u, v in zip(a, b, strict=True)), axes))


def in_graph_counts(x: Any, mode: str, rows: bool = False) -> Any:
    """The health counts of `x` as an int32 vector, computed where `x` lives (COUNT_WIDTH[mode] long); with
    `rows`, of each row of the matrix `x` (rows x COUNT_WIDTH[mode]). Every mode counts the same five plain
    comparisons in one reduction (on XLA:CPU, cheaper than isfinite masks, and than a one-output reduction: CURT_HEALTH
    counting only non-finite elements was ~3x slower); NaN is what is neither < 0, > 0 nor == 0. CURT_HEALTH's flag
    needs two counts only (< inf, > -inf: any other element makes them fall short of the size), ~40% cheaper."""
    size = x.shape[-1] if rows else int(np.size(x))
    if mode == "CURT_HEALTH":
        below_inf, above_ninf = _counted(count_masks(x, mode), rows)
        return jnp.stack([(2 * size - below_inf - above_ninf).clip(0, 1)], -1)
    below, above, zero, ninf, pinf = _counted(count_masks(x, mode), rows)
    nan = size - below - above - zero
    if mode == "CONCISE_HEALTH":
        return jnp.stack([ninf, pinf, nan], -1)
    return jnp.stack([ninf, pinf, nan, below - ninf, zero, above - pinf], -1)


def count_masks(x: Any, mode: str) -> list[Any]:
    """What in_graph_counts counts (host_counts.RAW_WIDTH of them): CURT_HEALTH < inf and > -inf (each false for
    NaN; a ReLU's output holds a NaN or inf exactly where its input is not < inf: its flag comes from its input's
    counts, host_counts.py), the others < 0, > 0, == 0, == -inf, == inf."""
    if mode == "CURT_HEALTH":
        return [x < jnp.inf, x > -jnp.inf]
    return [x < 0, x > 0, x == 0, x == -jnp.inf, x == jnp.inf]


def _sharded(sharding: Any) -> bool:
    """Whether a tensor type's `sharding` is over some mesh axis (explicit sharding, e.g. `jax.make_mesh`'s default
    axis types): such a tensor cannot be stacked with others of another sharding."""
    spec = getattr(sharding, "spec", None)
    return spec is not None and any(axis is not None for axis in spec)


def small_groups(values: list[Any]) -> tuple[list[int], list[tuple[int, list[int]]]]:
    """Which small tensors are counted alone and which stacked: (alone, [(padded length, members)]), those of one
    dtype, size class and sharding together."""
    alone: list[int] = []
    classes: dict[tuple[str, int, str], list[int]] = {}
    for i, v in enumerate(values):
        sharding = getattr(jax.typeof(v), "sharding", None)
        if _sharded(sharding):  # stacked beside differently sharded tensors, JAX raises ShardingTypeError: alone
            alone.append(i)
            continue
        # unsharded, but maybe over another mesh: grouped with its like only
        classes.setdefault((dtype_name(v), _size_class(int(np.size(v))), repr(sharding)), []).append(i)
    return alone, [(length, members) for (_, length, _), members in classes.items()]


def stacked(values: list[Any], members: list[int], length: int) -> tuple[Any, list[int]]:
    """The members' elements padded with zeros to `length`, one row each; the zeros added to each."""
    flat = [jnp.ravel(jnp.asarray(values[i])) for i in members]
    return jnp.stack([jnp.pad(f, (0, length - f.shape[0])) for f in flat]), [length - f.shape[0] for f in flat]


def counts_of_small(values: list[Any], mode: str) -> list[Any]:
    """in_graph_counts of each small tensor: those of one dtype and size class padded with zeros to one length,
    stacked, and counted in one reduction (the padding taken off the zero count)."""
    out: list[Any] = [None] * len(values)
    alone, groups = small_groups(values)
    for i in alone:
        out[i] = in_graph_counts(values[i], mode)
    for length, members in groups:
        matrix, pads = stacked(values, members, length)
        counts = in_graph_counts(matrix, mode, rows=True)
        column = ZERO_COLUMN[mode]
        for row, (i, pad) in enumerate(zip(members, pads, strict=True)):
            out[i] = counts[row] if not pad or column is None else counts[row].at[column].add(-pad)
    return out


def _size_class(size: int) -> int:
    length = 16
    while length < size:
        length *= 4
    return length


def dtype_name(x: Any) -> str:
    try:
        return str(jnp.dtype(x.dtype).name)
    except (TypeError, AttributeError):  # PRNG keys, tokens: no TensorFlow dtype; a Python number: none known
        return "opaque"


class Instrumenter:
    """One trace of one jitted function: writes its graphs and ops, collects the in-graph values to hand out."""

    def __init__(self, writer: DebugEventsWriter, mode: str, op_regex: re.Pattern[str] | None) -> None:
        self.writer, self.mode, self.op_regex = writer, mode, op_regex
        self.points: list[Point] = []
        self.nested = 0  # nested graphs so far: their names are stable from run to run (compare aligns by name)
        self.values: list[Any] = []  # per point: counts (health modes) or the tensor (FULL_TENSOR)
        # counts, each computed once: id(value) -> (value, (row, factor)); rows[row] the counts (None: a small
        # tensor's, computed at the end with the others, small[row] the tensor; or a ReLU's, made at the end from
        # its input's row, rectified[row] = (row, factor) of its input); factor: elements repeated
        self._counts: dict[int, tuple[Any, tuple[int, int]]] = {}
        self._rows: list[Any] = []
        self._small: dict[int, Any] = {}
        self._big: dict[int, Any] = {}  # row -> a larger tensor, counted alone at the end
        self._rectified: dict[int, tuple[int, int]] = {}
        # per point, whether it ran (loop iterations and branches may not): runs of live points as ints, or traced
        # int32 vectors (a loop's or branch's liveness)
        self.live: list[Any] = []
        self.loops = LoopCounts()  # while loops' iteration counts (iterations.py)
        self.orders = CountOrders()  # the axis order a larger tensor is counted in (count_order.py)
        # the top-level program hands out raw counts (host_counts.py): a CURT_HEALTH ReLU's flag is made from its
        # input's raw counts there; a body's counts are final flags in the program, which cannot tell -inf
        self.top = True

    def child(self) -> Instrumenter:
        body = Instrumenter(self.writer, self.mode, self.op_regex)
        body.top = False
        return body

    def adopt(self, points: list[Point], payload: Any, live: Any) -> None:
        """A body's points, run once more: its payload (counts vector, or tensors) and liveness (None: all ran)."""
        self.points.extend(points)
        if self.mode in COUNT_WIDTH:
            self.values.append((len(self._rows), 1))
            self._rows.append(payload)
        elif self.mode == "FULL_TENSOR":
            self.values.extend(payload)
        self.live.append(len(points) if live is None else live)

    def live_vector(self) -> Any:
        """One int32 per point, 0 where it did not run; None when every point runs (no loop or branch)."""
        if all(isinstance(s, int) for s in self.live):
            return None
        return jnp.concatenate([jnp.ones(s, jnp.int32) if isinstance(s, int) else s for s in self.live])

    def counts(self, x: Any, source: Any = None, rectifies: Any = None) -> tuple[int, int]:
        """`x`'s counts as (row, factor): computed once per traced value; `source`'s when x holds its elements;
        made from `rectifies`'s when x is max(rectifies, 0) (no pass over x: a ReLU's output is one of a network's
        largest tensors)."""
        known = self._counts.get(id(x))
        if known is not None and known[0] is x:
            return known[1]
        if rectifies is not None and (self.mode in ("CONCISE_HEALTH", "FULL_HEALTH") or self.top):
            row, factor = len(self._rows), 1
            self._rectified[row] = self.counts(rectifies)
            self._rows.append(None)
        elif source is None:
            row, factor = len(self._rows), 1
            self._rows.append(None)
            (self._small if int(np.size(x)) <= SMALL else self._big)[row] = x
        else:
            row, by = self.counts(source)
            factor = by * (int(np.size(x)) // max(int(np.size(source)), 1))
        self._counts[id(x)] = (x, (row, factor))
        return row, factor

    def watch(
        self,
        graph_id: str,
        op_name: str,
        op_type: str,
        slot: int,
        tensor_id: int,
        x: Any,
        source: Any = None,
        rectifies: Any = None,
    ) -> None:
        dtype = dtype_name(x)
        if not summaries.is_instrumented(self.mode, dtype):
            return
        if (
            graph_id
            and self.op_regex is not None
            and not (self.op_regex.search(op_name) or self.op_regex.search(op_type))
        ):
            return
        self.points.append(Point(graph_id, op_name, slot, tensor_id, dtype, tuple(np.shape(x))))
        self.live.append(1)
        if self.mode in COUNT_WIDTH:
            self.values.append(self.counts(x, source, rectifies))
        elif self.mode == "FULL_TENSOR":
            self.values.append(x)

    def payload(self) -> Any:
        """What leaves the program once per call: one int32 array of all counts, or the tensors themselves."""
        if self.mode not in COUNT_WIDTH:
            return list(self.values)
        for row, x in self._big.items():
            self._rows[row] = in_graph_counts(self.orders.oriented(x), self.mode)
        for row, counts in zip(self._small, counts_of_small(list(self._small.values()), self.mode), strict=True):
            self._rows[row] = counts
        for row, (of, factor) in sorted(self._rectified.items()):  # an input's row comes before its ReLU's
            self._rows[row] = rectified_counts(self._rows[of] * factor if factor != 1 else self._rows[of], self.mode)
        vectors = [self._rows[row] * factor if factor != 1 else self._rows[row] for row, factor in self.values]
        return jnp.concatenate(vectors) if vectors else jnp.zeros((0,), jnp.int32)

    def host_payload(self) -> tuple[Any, host_counts.HostCounts | None]:
        """payload() of the top-level program in a health mode: only its raw reductions, and what derives the
        points' counts from them on the host (host_counts.py); (payload(), None) in the other modes."""
        if self.mode not in COUNT_WIDTH:
            return self.payload(), None
        layout = host_counts.RawLayout(self.mode, COUNT_WIDTH[self.mode])
        for row, x in self._big.items():
            layout.tensor(row, _counted(count_masks(self.orders.oriented(x), self.mode), False), int(np.size(x)))
        rows, small = list(self._small), list(self._small.values())
        alone, groups = small_groups(small)
        for i in alone:
            layout.tensor(rows[i], _counted(count_masks(small[i], self.mode), False), int(np.size(small[i])))
        for length, members in groups:
            matrix, pads = stacked(small, members, length)
            layout.group([rows[i] for i in members], _counted(count_masks(matrix, self.mode), True), length, pads)
        for row, of in self._rectified.items():
            layout.rectified(row, of)
        for row, counts in enumerate(self._rows):
            if counts is not None:  # a body's payload (adopt), its counts made in its program
                layout.adopted(row, counts)
        return layout.finish(self.values)

    def run_graph(
        self, closed: Any, args: list[Any], graph_name: str, outer_id: str = "", body: bool = False
    ) -> tuple[str, list[Any]]:
        """Interprets `closed` (a ClosedJaxpr) on `args` as graph `graph_name`; (graph id, outputs). A loop body's
        or branch's (`body`) inputs are traced too: they change from one run to the next (a carry), and no single
        op of the caller holds them, so this is how an op reading one knows its input's health."""
        graph_id = uuid.uuid4().hex
        self.writer.graph(graph_id, graph_name, outer_id)
        jaxpr = closed.jaxpr
        env: dict[Any, Any] = {}
        producer: dict[Any, str] = {}
        for kind, variables, values in (("Placeholder", jaxpr.invars, args), ("Const", jaxpr.constvars, closed.consts)):
            for i, (var, value) in enumerate(zip(variables, values, strict=True)):
                name = f"{'arg' if kind == 'Placeholder' else 'const'}_{i}"
                (tensor_id,) = self.writer.tensor_ids(1)
                self.writer.op(graph_id, graph_name, kind, name, [], [tensor_id], [])
                env[var], producer[var] = value, f"{name}:0"
                if body and kind == "Placeholder":
                    self.watch(graph_id, name, kind, 0, tensor_id, value)
        for index, eqn in enumerate(jaxpr.eqns):
            self._equation(graph_id, graph_name, index, eqn, env, producer)
        return graph_id, [_read(env, v) for v in jaxpr.outvars]

    def _equation(
        self, graph_id: str, graph_name: str, index: int, eqn: Any, env: dict[Any, Any], producer: dict[Any, str]
    ) -> None:
        invals = [_read(env, v) for v in eqn.invars]
        prim = eqn.primitive.name
        stack = str(eqn.source_info.name_stack)
        op_name = f"{stack}/{prim}_{index}" if stack else f"{prim}_{index}"
        if prim in CALL_PRIMITIVES or prim in CUSTOM_CALLS:
            self.nested += 1
            body = eqn.params["jaxpr" if prim in CALL_PRIMITIVES else "call_jaxpr"]
            op_type = f"{graph_name}.{eqn.params.get('name') or _function_name(body)}_{self.nested}"
            _, outs = self.run_graph(body, invals, op_type, graph_id)
        elif prim == "scan":
            self.nested += 1
            op_type = prim
            outs = self._scan(eqn.params, invals, f"{graph_name}.scan_{self.nested}", graph_id)
        elif prim == "shard_map":  # linked as a nested jit is: the calling op's type is the body's graph name
            self.nested += 1
            op_type = f"{graph_name}.shard_map_{self.nested}"
            outs = shard_bodies.run_shard_map(self, eqn.params, invals, op_type, graph_id)
        elif prim in ("while", "cond"):
            self.nested += 1
            op_type = prim
            run = bodies.run_while if prim == "while" else bodies.run_cond
            outs = run(self, eqn.params, invals, f"{graph_name}.{prim}_{self.nested}", graph_id, op_name)
        else:
            op_type = prim
            params = eqn.primitive.get_bind_params(eqn.params)
            subfuns, params = params if isinstance(params, tuple) else ([], params)
            outs = eqn.primitive.bind(*subfuns, *invals, **params)
            outs = list(outs) if eqn.primitive.multiple_results else [outs]
            self.orders.note(prim, eqn.params, invals, outs)
        ids = self.writer.tensor_ids(len(eqn.outvars))
        inputs = [producer[v] for v in eqn.invars if not isinstance(v, jcore.Literal) and v in producer]
        self.writer.op(
            graph_id, graph_name, op_type, op_name, inputs, ids, self.writer.stack(frames.of_equation(eqn.source_info))
        )
        source = _same_elements_as(prim, invals, outs)
        rectifies = _rectified_input(prim, eqn.invars, invals, outs)
        for slot, (var, value, tensor_id) in enumerate(zip(eqn.outvars, outs, ids, strict=True)):
            if isinstance(var, jcore.DropVar):
                continue
            env[var], producer[var] = value, f"{op_name}:{slot}"
            self.watch(graph_id, op_name, op_type, slot, tensor_id, value, source, rectifies)

    # a jaxpr equation's params: whatever the primitive declares (jaxpr, length, num_carry, ...)
    def _scan(self, params: bodies.Params, invals: list[Any], body_name: str, outer_id: str) -> list[Any]:
        """A scan whose body is a graph of its own, recorded at every iteration: the body's counts (or tensors)
        leave each iteration as one more scanned output, and its points repeat once per iteration, in the order
        the iterations ran."""
        consts, carried = params["num_consts"], params["num_carry"]
        sub = self.child()

        def body(carry: list[Any], xs: list[Any]) -> tuple[list[Any], tuple[list[Any], Any, Any, Any]]:
            _, outs = sub.run_graph(params["jaxpr"], [*invals[:consts], *carry, *xs], body_name, outer_id, body=True)
            return outs[:carried], (outs[carried:], sub.payload(), sub.live_vector(), sub.loops.payload())

        init, xs = list(invals[consts : consts + carried]), list(invals[consts + carried :])
        carry, (ys, payload, live, loops) = lax.scan(
            body, init, xs, length=params["length"], reverse=params["reverse"], unroll=params["unroll"]
        )
        steps = range(params["length"])
        for i in reversed(steps) if params["reverse"] else steps:
            run = payload[i] if self.mode in COUNT_WIDTH else [v[i] for v in payload]
            self.adopt(sub.points, run, None if live is None else live[i])
            self.loops.adopt(sub.loops.points, (loops[0][i], loops[1][i]))
        return [*carry, *ys]


def _function_name(closed: Any) -> str:
    """The Python function a jaxpr was made from (a custom_jvp/custom_vjp body), else "fn"."""
    name = getattr(getattr(closed.jaxpr, "debug_info", None), "func_name", None)
    return re.sub(r"\W", "_", name) if isinstance(name, str) and name else "fn"


def _same_elements_as(prim: str, invals: list[Any], outs: list[Any]) -> Any:
    """The input whose elements the one output holds (its counts are the output's), or None."""
    if len(outs) != 1 or not invals:
        return None
    same = prim in SAME_ELEMENTS and len(invals) == 1
    widening = prim == "convert_element_type" and (dtype_name(invals[0]), dtype_name(outs[0])) in _WIDENING
    return invals[0] if same or widening else None


def _rectified_input(prim: str, invars: list[Any], invals: list[Any], outs: list[Any]) -> Any:
    """x when the equation is max(x, 0) or max(0, x) with a literal zero (jax.nn.relu's), x of the output's shape
    and dtype; else None."""
    if prim != "max" or len(invars) != 2 or len(outs) != 1:
        return None
    for zero, x in ((invars[1], invals[0]), (invars[0], invals[1])):
        literal = isinstance(zero, jcore.Literal) and np.ndim(zero.val) == 0 and float(zero.val) == 0.0
        if literal and getattr(x, "shape", None) == outs[0].shape and dtype_name(x) == dtype_name(outs[0]):
            return x
    return None


def _read(env: dict[Any, Any], var: Any) -> Any:
    return var.val if isinstance(var, jcore.Literal) else env[var]


def device_name() -> str:
    device = jax.devices()[0]
    return f"/job:localhost/replica:0/task:0/device:{device.platform.upper()}:{device.id}"

"""`enable_dump_debug_info` for JAX: `jax.jit` replaced by a recording `jit` that writes a tfdbg2 file set.

Mechanism: the recording `jit` jits a wrapper that traces the user's function to a jaxpr and re-runs it equation
by equation (instrument.py) inside the same trace, adding the mode's counts of every output to the program; they
leave it as one more output (one int32 array per call, with the index of the trace it was compiled from), so the
program keeps JAX's C++ dispatch (a host callback would send every call through Python dispatch, ~1 ms a step).
After the call the wrapper hands them to the writer's thread (writer/background.py), which writes them as graph
execution traces and the call as an execution, its outputs' summaries included, then flushes: a program killed by
SIGKILL loses at most the calls still queued and those being written (background.LOST_AT_MOST); stderr says so.
"""

from __future__ import annotations

import atexit
import collections
import functools
import re
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..writer import background, summaries
from ..writer.events import DebugEventsWriter
from ..writer.execution_layout import ExecutionLayout
from ..writer.trace_batch import TraceBatch
from . import eager, frames, instrument, iterations, pmaps
from .before import jitted_before
from .before import record as record_before
from .before import said as said_before
from .call_records import TICK, CallRecord
from .host_counts import HostCounts

_lock = threading.Lock()
_active: dict[str, Any] = {}  # "recorder", "original_jit"
_REMEMBERED = 4096  # outputs whose tensor ids a later input may name
_KILL_WINDOW = (  # said at the call: the user's choice between flush() per step and the training thread's speed
    f"Records are written on a background thread: a program killed by SIGKILL loses at most its last "
    f"{background.LOST_AT_MOST} calls (a normal exit or an exception writes them all; the writer's flush() puts the "
    "calls so far on disk)"
)
Batches = tuple[TraceBatch, TraceBatch]  # a trace's graph points' records, its call outputs' protos


class Recorder:
    """The dump of one `enable_dump_debug_info` call."""

    def __init__(self, writer: DebugEventsWriter, mode: str, op_regex: re.Pattern[str] | None) -> None:
        self.writer, self.mode, self.op_regex = writer, mode, op_regex
        self.mode_number = summaries.mode_number(mode)
        self.device = instrument.device_name()
        self.device_id = writer.device_id(self.device)
        # tensor ids of the latest outputs (jitted calls' and eager ops'), by object, held weakly (a freed array's id
        # may be reused: the weak reference tells): a later call or op that takes them as inputs names them, as
        # TensorFlow's eager executions do
        self._outputs: collections.OrderedDict[int, tuple[weakref.ref[Any], int]] = collections.OrderedDict()
        self.uninstall_eager: Callable[[], None] | None = None

    def input_ids(self, leaves: list[Any]) -> list[int]:
        found = [self._outputs.get(id(x)) for x in leaves]
        return [k[1] if k is not None and k[0]() is x else -1 for x, k in zip(leaves, found, strict=True)]

    def remember(self, leaves: list[Any], ids: list[int]) -> None:
        for x, i in zip(leaves, ids, strict=True):
            try:
                self._outputs[id(x)] = (weakref.ref(x), i)
            except TypeError:  # a Python number or another object without weak references: never an input later
                continue
            self._outputs.move_to_end(id(x))
        while len(self._outputs) > _REMEMBERED:
            self._outputs.popitem(last=False)

    def eager(self, op_type: str, inputs: list[Any], outputs: list[Any]) -> None:
        """One eager op (eager.py) as an execution, its outputs' summaries computed on the host."""
        wall = time.time()  # when it ran: the write waits in the writer's queue
        leaves = [x for x in outputs if hasattr(x, "shape")]
        ids = self.writer.tensor_ids(len(leaves))
        # summaries read here (the user may donate or delete an output next); written in turn with jitted calls
        protos = [] if self.mode == "NO_TENSOR" else [self._eager_proto(x, i) for x, i in zip(leaves, ids)]
        write = functools.partial(
            self.writer.execution,
            op_type,
            self.mode_number,
            input_tensor_ids=self.input_ids(inputs),
            output_tensor_ids=ids,
            tensor_protos=protos,
            stack_frame_ids=self.writer.stack(frames.of_caller()),
            output_tensor_device_ids=[self.device_id] * len(ids),
            wall_time=wall,
        )
        self.remember(leaves, ids)
        self.writer.defer(write)
        self.writer.defer(self.writer.flush)

    def _eager_proto(self, x: Any, tensor_id: int) -> bytes:
        dtype = instrument.dtype_name(x)
        if not summaries.is_instrumented(self.mode, dtype):
            return summaries.empty_proto()
        if self.mode == "FULL_TENSOR":
            return summaries.tensor_proto(np.asarray(x), typed_scalar=True)
        counts = summaries.counts_of(np.asarray(x)) if self.mode in summaries.HEALTH_MODES else None
        return summaries.tensor_proto(summaries.debug_vector(self.mode, -1, dtype, tuple(x.shape), counts))

    def batch(self, points: list[instrument.Point]) -> Batches | None:
        """The graph points' records and the call's outputs' protos laid out once per trace (None in FULL_TENSOR:
        whole tensors, one by one)."""
        if self.mode == "FULL_TENSOR":
            return None
        traces = TraceBatch([p for p in points if p.graph_id], self.mode, self.device)
        return traces, TraceBatch([p for p in points if not p.graph_id], self.mode, self.device)

    def write_traces(
        self, points: list[instrument.Point], batch: Batches | None, payload: Any, live: Any, wall: float
    ) -> list[bytes]:
        """Graph execution traces for the graph points that ran (`live`: 0 for a loop iteration or a branch that did
        not, None: all ran), stamped `wall` (when the call ran); the protos of the call's outputs (graph_id "")
        returned."""
        width = instrument.COUNT_WIDTH.get(self.mode, 0)
        counts = np.asarray(payload).reshape(len(points), width) if width else None
        # the graph points come first (TraceBatch holds them: no walk over the points per call)
        graph_points = batch[0].count if batch is not None else sum(1 for p in points if p.graph_id)
        ran = np.ones(graph_points, bool) if live is None else np.asarray(live)[:graph_points] != 0
        if batch is None:  # FULL_TENSOR: whole tensors
            outputs_at = range(graph_points, len(points))
            for i, p in enumerate(points[:graph_points]):
                if ran[i]:
                    proto = summaries.tensor_proto(np.asarray(payload[i]))
                    self.writer.trace(p.graph_id, p.op_name, p.slot, self.mode_number, proto, self.device, wall)
            return [summaries.tensor_proto(np.asarray(payload[i]), typed_scalar=True) for i in outputs_at]
        traces, outputs = batch
        graph_counts = counts[:graph_points] if counts is not None else None
        if live is None and not self.writer.buffered:  # every op ran: the records joined in one pass
            self.writer.traces_framed([traces.joined(wall, graph_counts)])
        else:
            records = traces.records(wall, graph_counts)
            self.writer.traces_framed(records if live is None else [r for r, k in zip(records, ran) if k])
        return outputs.protos(counts[graph_points:] if counts is not None else None)


class RecordedJit:
    """What the recording `jax.jit` returns: calls run the instrumented program and are recorded."""

    # jit_kwargs: jax.jit's own keyword arguments, passed through as the user gave them
    def __init__(self, fun: Callable[..., Any], jit_kwargs: dict[str, Any], recorder: Recorder, plain_jit: Any):
        functools.update_wrapper(self, fun)
        self._fun, self._recorder = fun, recorder
        self._plain = plain_jit(fun, **jit_kwargs)
        self._jitted = plain_jit(self._instrumented, **jit_kwargs)
        self._name = f"jit_{getattr(fun, '__name__', 'fn')}"
        self._traces: list[tuple[str, list[instrument.Point], Batches | None]] = []  # per trace: graph, points
        self._loops: list[list[instrument.Point]] = []  # per trace: its while loops' counts (iterations.py)
        self._by_dtypes: dict[tuple[Any, ...], list[bool]] = {}  # outputs' dtypes -> which get a summary
        self._counts: list[HostCounts | None] = []  # per trace: its raw payload -> the points' counts (host_counts.py)
        self._layouts: dict[tuple[Any, ...], ExecutionLayout] = {}  # (trace, call site, outputs) -> its executions

    def __getattr__(self, name: str) -> Any:  # lower, trace, eval_shape...: the plain jitted function's
        return getattr(self._plain, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves = jax.tree_util.tree_leaves((args, kwargs))
        if any(isinstance(x, jax.core.Tracer) for x in leaves):  # called inside another trace: a nested jit there
            return self._plain(*args, **kwargs)
        rec = self._recorder
        wall = time.time()  # when the call ran: its records wait in the writer's queue (call_records.py)
        stack = rec.writer.stack(frames.of_caller())
        with eager.unrecorded():  # recorded here, not as an eager call; and JAX's fast dispatch kept
            out, (which, payload, live, loops) = self._jitted(*args, **kwargs)
        outs = jax.tree_util.tree_leaves(out)
        ids = rec.writer.tensor_ids(len(outs))
        counted = self._counted(outs)
        inputs = rec.input_ids(leaves)
        rec.remember(outs, ids)
        # written on the writer's thread: it waits for the counts, the training thread goes on (background.py), with
        # the calls queued after it (call_records.py)
        rec.writer.defer(CallRecord(self, (which, payload, live, loops), ids, inputs, counted, stack, wall))
        return out

    def _counted(self, outs: list[Any]) -> list[bool]:
        """Which outputs get a summary, by their dtypes (kept per dtypes: reading a dtype's name costs ~2 us)."""
        dtypes = tuple(getattr(x, "dtype", None) for x in outs)
        known = self._by_dtypes.get(dtypes)
        if known is None:
            known = self._by_dtypes[dtypes] = [
                summaries.is_instrumented(self._recorder.mode, instrument.dtype_name(x)) for x in outs
            ]
        return known

    def _write(
        self, result: Any, ids: list[int], inputs: list[int], counted: list[bool], stack: list[str], wall: float
    ) -> None:
        """One call's traces and execution (`result`: the trace index, payload and liveness it returned; `wall`: when
        it ran, its traces stamped then and its execution a tick later, as call_records.py stamps joined calls)."""
        rec = self._recorder
        which, payload, live, loops = result
        if which is None:  # a health mode: the trace's index leads the raw counts (one array copied to the host)
            raw = np.asarray(payload)
            which, payload = raw[0], raw[1:]
        graph_id, points, batch = self._traces[int(which)]
        derive = self._counts[int(which)]
        protos = rec.write_traces(points, batch, payload if derive is None else derive(payload), live, wall)
        if loops is not None:
            iterations.write(rec.writer, rec.mode, self._loops[int(which)], loops, rec.device, wall)
        if rec.mode == "NO_TENSOR":
            protos = []
        elif rec.mode in summaries.HEALTH_MODES:  # a non-float output gets the empty placeholder, as in TF
            it = iter(protos)
            protos = [next(it) if c else b"" for c in counted]
        rec.writer.execution(
            self._name,
            rec.mode_number,
            graph_id=graph_id,
            input_tensor_ids=inputs,
            output_tensor_ids=ids,
            tensor_protos=protos,
            stack_frame_ids=stack,
            output_tensor_device_ids=[rec.device_id] * len(ids),
            wall_time=wall + TICK,
        )  # the files flushed once the calls taken together are written (background.py)

    def _instrumented(self, *args: Any, **kwargs: Any) -> Any:
        rec = self._recorder
        leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
        dynamic = [i for i, x in enumerate(leaves) if isinstance(x, jax.core.Tracer)]

        def flat(*values: Any) -> Any:
            full = list(leaves)
            for i, v in zip(dynamic, values, strict=True):
                full[i] = v
            a, k = jax.tree_util.tree_unflatten(tree, full)
            return self._fun(*a, **k)

        closed, out_shape = jax.make_jaxpr(flat, return_shape=True)(*[leaves[i] for i in dynamic])
        inst = instrument.Instrumenter(rec.writer, rec.mode, rec.op_regex)
        graph_id, outs = inst.run_graph(closed, [leaves[i] for i in dynamic], self._name)
        for slot, x in enumerate(outs):
            inst.watch("", f"output_{slot}", "output", slot, -1, x)
        points = list(inst.points)  # the graph's points first, then the call's outputs (watched last)
        self._traces.append((graph_id, points, rec.batch(points)))
        self._loops.append(list(inst.loops.points))
        payload, derive = inst.host_payload()
        self._counts.append(derive)
        which: Any = np.int32(len(self._traces) - 1)  # a constant of this trace's program
        if derive is not None:  # sent with the raw counts: one device array per call read on the host, not two
            payload, which = jnp.concatenate([jnp.full((1,), which, jnp.int32), payload]), None
        out = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(out_shape), outs)
        loops = inst.loops.payload() if inst.loops.points else None  # no loop: two outputs fewer per call
        return out, (which, payload, inst.live_vector(), loops)


def enable_dump_debug_info(
    logdir: str,
    tensor_debug_mode: str = "FULL_HEALTH",
    circular_buffer_size: int = -1,
    op_regex: str | None = None,
) -> DebugEventsWriter:
    """Records every function wrapped by `jax.jit` from now on into a tfdbg2 dump in `logdir` (see the module
    docstring and README "JAX"). Raises at once when `logdir` cannot be written or the mode is unknown."""
    summaries.mode_number(tensor_debug_mode)
    pattern = re.compile(op_regex) if op_regex else None
    with _lock:
        if _active:
            raise RuntimeError("enable_dump_debug_info was already called; call disable_dump_debug_info first")
        writer = DebugEventsWriter(logdir, f"jax {jax.__version__}", circular_buffer_size)
        recorder = Recorder(writer, tensor_debug_mode, pattern)
        original = jax.jit
        before = jitted_before(original)

        def recording_jit(fun: Any = None, **kwargs: Any) -> Any:
            if fun is None:
                return functools.partial(recording_jit, **kwargs)
            return RecordedJit(fun, kwargs, recorder, original)

        _active.update(recorder=recorder, original_jit=original)
        jax.jit = recording_jit
        _active["uninstall_pmap"] = pmaps.install(lambda f: RecordedJit(f, {}, recorder, original))
        recorder.uninstall_eager, calls_seen = eager.install(recorder.eager)
        if not calls_seen:
            record_before(writer, before)
        atexit.register(writer.close)
    print(
        "tensorboard_plugin_dbg: recording functions wrapped by jax.jit from now on into "
        f"{logdir} ({tensor_debug_mode}); {said_before(before, calls_seen)}. {_KILL_WINDOW}",
        file=sys.stderr,
    )
    return writer


def disable_dump_debug_info() -> None:
    """Stops recording (functions already wrapped keep recording into the closed dump: nothing) and closes it."""
    with _lock:
        if not _active:
            return
        jax.jit = _active["original_jit"]
        _active["uninstall_pmap"]()
        if _active["recorder"].uninstall_eager is not None:
            _active["recorder"].uninstall_eager()
        _active["recorder"].writer.close()
        _active.clear()

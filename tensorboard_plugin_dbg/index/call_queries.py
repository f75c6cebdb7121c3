"""One tf.function call's graph execution traces: the rows TensorFlow wrote while that call ran.

A dump links no trace to the call that ran it. It does not need to: a call's traces are written while it runs and
its `Execution` record right after it returns, so the traces of eager call `e` are those written after execution
`e - 1`'s record and up to `e`'s — the same window the root-cause classifier uses. Rows are in write order, and a
single trace file's wall times ascend, so the window is a row range found by binary search: a call's rows cost what
the call holds, not what the run holds. Several hosts' trace files (rows not in wall-time order) fall back to one
masked pass over the run, cached per call.

A window also holds traces another thread wrote meanwhile (a `tf.data` map function running ahead in the
background, e.g. Keras's `Dataset_map_format_example` beside its train function). The dump records no thread, but
every trace names its graph, and every graph its outer graph (the graph it was traced inside): a call's traces are
the window's rows of its function's graph and of the graphs traced inside it (nested tf.functions, loop and scan
bodies), found per trace kind, so the filter costs the kinds, not the rows. When the dump cannot name the call's
graph, the window is kept whole.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..wire import types as wire
from .errors import NotFound
from .exec_queries import ExecutionQueries
from .state import RunState

_BLOCK = 1 << 20  # rows checked at a time for wall-time order (bounded temporaries)


@dataclass(frozen=True)
class CallRows:
    """A call's execution index, op type, graph id (None when the dump cannot name it) and sorted trace rows."""

    index: int
    op_type: str
    graph_id: str | None
    rows: np.ndarray


class CallQueries:
    def __init__(self, run: RunState, execs: ExecutionQueries):
        self.run = run
        self.execs = execs

    def _walls_ascend(self, n: int) -> bool:
        """Whether trace rows [0, n) are in wall-time order (checked once per published length, a block at a
        time)."""

        def build() -> bool:
            wall = self.run.traces.view("wall_time", n)
            for lo in range(0, max(n - 1, 0), _BLOCK):
                w = wall[lo : lo + _BLOCK + 1]
                if not bool(np.all(w[1:] >= w[:-1])):
                    return False
            return True

        return self.run.derived.get("trace_walls_ascend", n, build)

    def call(self, index: int) -> CallRows:
        """The traces of eager execution `index`, a tf.function call. NotFound for an unknown execution or one that
        is an eager op (it ran no graph)."""
        run = self.run
        n_exec, arrays = run.execs.snapshot()
        if not 0 <= index < n_exec:
            raise NotFound(f"execution {index} not found (run has {n_exec})")
        digest = self.execs.digests(np.array([index], np.int64))[0]
        if not digest["is_function"]:
            raise NotFound(f"execution {index} is the eager op {digest['op_type']}, not a tf.function call")
        hi = float(arrays["wall_time"][index])
        lo = float(arrays["wall_time"][index - 1]) if index > 0 else -np.inf
        n = run.lengths().traces
        if self._walls_ascend(n):
            wall = run.traces.view("wall_time", n)
            rows = np.arange(np.searchsorted(wall, lo, "right"), np.searchsorted(wall, hi, "right"), dtype=np.int64)
        else:
            rows = run.derived.get(f"call_rows:{index}", n, lambda: self._masked(lo, hi, n))
        graph_id = digest["graph_id"]
        if graph_id and len(rows):
            kinds = run.traces.view("kind", n)[rows]
            rows = rows[self._kinds_inside(graph_id)[kinds]]
        return CallRows(index, digest["op_type"], graph_id, rows)

    def _kinds_inside(self, graph_id: str) -> npt.NDArray[np.bool_]:
        """Per trace kind: whether its graph is `graph_id` or was traced inside it (its outer-graph chain holds
        it). Cached per (kinds, graphs) count: a graph record read later can only add kinds."""
        run = self.run

        def build() -> npt.NDArray[np.bool_]:
            inside: dict[str, bool] = {}
            codes = list(run.kinds.kinds)
            wanted = np.zeros(len(codes), bool)
            for code, (g, _name, _slot, _mode, _dev) in enumerate(codes):
                if g not in inside:
                    inside[g] = graph_id in run.graph_chain_ids(g)
                wanted[code] = inside[g]
            return wanted

        return run.derived.get(f"call_kinds:{graph_id}", (len(run.kinds), len(run.graphs)), build)

    def _masked(self, lo: float, hi: float, n: int) -> np.ndarray:
        wall = self.run.traces.view("wall_time", n)
        return np.flatnonzero((wall > lo) & (wall <= hi)).astype(np.int64)

    def summary(self, call: CallRows, filtered: npt.NDArray[np.int64]) -> wire.CallInfo:
        """wire.ts CallInfo: the call, how many traces it holds, and its first non-finite trace among `filtered`
        (the rows the list shows: the call's rows under the other filters) with its position there."""
        run = self.run
        nf = run.trace_nf.view("row", run.lengths().trace_nf)
        first: wire.CallInfoFirstNonfinite | None = None
        if len(filtered):
            lo, hi = np.searchsorted(nf, [filtered[0], filtered[-1] + 1])
            bad = nf[lo:hi]
            hit = filtered[np.isin(filtered, bad, assume_unique=True)] if len(bad) else bad
            if len(hit):
                row = int(hit[0])
                first = {"index": row, "position": int(np.searchsorted(filtered, row))}
        graph = run.graphs.get(call.graph_id) if call.graph_id else None
        return {
            "index": call.index,
            "op_type": call.op_type,
            "graph_id": call.graph_id,
            "graph_name": graph.name if graph else "",
            "traces": len(call.rows),
            "first_nonfinite": first,
        }

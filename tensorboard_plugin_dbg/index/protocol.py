"""What the index offers the layers above it (API routes, analyses, the headless report).

The API layer depends on these two protocols only, never on the index's internals. Every query returns the wire
type its docstring names (wire/types.py, generated from the schema of `frontend/src/api/wire.ts`): its `Body`,
without the `run` field the route adds. Queries raise `NotFound` for an unknown
index, graph, op or frame; parameters arrive already validated (non-negative ints, begin <= end, page size within
the cap), so the index never sees a malformed request.

Cost rule: every query costs what its answer costs (a page, one record), never what the dump costs.
Thread safety: queries may run on any thread while the refresher appends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ..reader.traces import Kind
from ..wire import types as wire
from .alert_order import AlertOrder
from .alert_queries import AlertPage
from .derived import DerivedCache
from .errors import NotFound, RecordGone
from .exec_outputs import ExecOutputs
from .kind_steps import KindSteps
from .line_ops import FileLineOps
from .state import OpEntry
from .tensor_queries import Source, TensorRecord
from .trace_filter import NO_FILTER, TraceFilter

__all__ = [
    "Catalog",
    "ExecOutputs",
    "FileLineOps",
    "NotFound",
    "RecordGone",
    "RunQueries",
    "TensorRecord",
    "TraceFilter",
]


class RunQueries(Protocol):
    """One run: one tfdbg2 file set, or several sharing a tfdbg_run_id in one directory (multi-host).

    The API's page queries come first; then the columnar read interface the analysis layer builds on (whole-run
    arrays, the alert list, per-record reads) and the run's derived-value cache, where the layers above keep their
    whole-run values under the one lock order (derived.py)."""

    name: str
    directory: str  # the folder (path or URL) holding the run's files
    version: int  # grows whenever the refresher appended anything: the key of every whole-run value
    done: bool  # the dump has been read to its end (as of the last refresh pass)
    derived: DerivedCache

    @property
    def exec_op_types(self) -> list[str]:
        """Execution op type by code (execution_arrays()["op_type"]); read-only to the layers above."""
        ...

    def info(self) -> wire.RunInfoBody:
        """wire.ts RunInfo without `summary` (the `runs` route adds it)."""
        ...

    def alerts(self, begin: int, end: int, alert_type: str | None = None) -> AlertPage:
        """wire.ts AlertsResponse minus `run`, roles null (analysis/alerts.py fills them): alerts [begin, end) in
        wall-time order across executions and graph executions, with `total` (after the type filter) and
        `totals_by_type`. end <= begin: the totals only, O(1)."""
        ...

    def alert_table(self, stale_ok: bool = False) -> AlertOrder:
        """Every alert in wall-time order (alert_order.py); `stale_ok`: the previous version will do while another
        thread rebuilds it."""
        ...

    def alert_rows(self, page: np.ndarray, src: np.ndarray, rows: np.ndarray, walls: np.ndarray) -> list[wire.Alert]:
        """wire.ts Alert (role null) of alert-list positions `page` whose (source, row, wall time) are given."""
        ...

    def executions(self, begin: int, end: int) -> wire.ExecutionsResponseBody:
        """wire.ts ExecutionsResponse minus `run`."""
        ...

    def execution(self, index: int, max_elements: int = 1000) -> wire.ExecutionDetail:
        """wire.ts ExecutionDetail. Raises NotFound for index >= count."""
        ...

    def graph_executions(
        self,
        begin: int,
        end: int,
        filters: TraceFilter = NO_FILTER,
        call: int | None = None,
        within: np.ndarray | None = None,
    ) -> wire.GraphExecutionsResponseBody:
        """wire.ts GraphExecutionsResponse minus `run`: the traces `filters` keeps (trace_filter.py says how each
        field matches), among those of `call` when given (an eager execution index: a tf.function call's traces,
        with `call` describing it; NotFound for an eager op) and among `within` (sorted rows, e.g. those differing
        from another run) when given; `total` is the filtered total."""
        ...

    def device_counts(self) -> wire.DevicesResponseBody:
        """wire.ts DevicesResponse minus `run`: each (device, host) with its graph traces and eager executions."""
        ...

    def graph_execution(self, index: int, begin: int = 0, max_elements: int = 1000) -> wire.GraphExecutionDetail:
        """wire.ts GraphExecutionDetail; `begin`/`max_elements` slice a FULL_TENSOR value by flat element."""
        ...

    def tensor_record(self, source: Source, index: int, output: int | None = None) -> TensorRecord:
        """One debug tensor: `source` "graph" (trace `index`; `output`, when given, must be its slot) or "eager"
        (execution `index`, output `output`, default 0). FULL_TENSOR values are located in the file, not read
        (tensor_queries.py). Raises NotFound for an unknown index or output, RecordGone when the file shrank."""
        ...

    def graph(self, graph_id: str) -> wire.GraphInfoBody:
        """wire.ts GraphInfo minus `run`."""
        ...

    def op(self, graph_id: str, op_name: str, near: int | None = None) -> wire.OpInfoBody:
        """wire.ts OpInfo minus `run`. `near` picks which trace indices are listed (the nearest 1,000)."""
        ...

    def source_files(self) -> wire.SourceFilesResponseBody:
        """wire.ts SourceFilesResponse minus `run`."""
        ...

    def source_file(
        self, index: int, begin_line: int | None = None, end_line: int | None = None
    ) -> wire.SourceFileResponseBody:
        """wire.ts SourceFileResponse minus `run` (lines 1-based, inclusive; clamped to the file)."""
        ...

    def stack_frames(self, ids: Sequence[str]) -> wire.StackFramesResponseBody:
        """wire.ts StackFramesResponse minus `run`, frames in request order. NotFound names the first unknown id."""
        ...

    def source_line_ops(self, index: int) -> FileLineOps:
        """The graph ops each line of source file `index` created (index/line_ops.py): each op at the innermost
        frame of its creation stack in that file, `direct` where that frame is also its innermost user frame.
        Cached per (ops, frames, sources) count; NotFound for an unknown file."""
        ...

    # ------------------------------------------------------------------ columnar read interface (analysis layer)
    def trace_arrays(self) -> dict[str, np.ndarray]:
        """Read-only trace columns: `kind`, `wall_time`, `loc`, and the sorted `nonfinite_rows`."""
        ...

    def execution_arrays(self) -> dict[str, np.ndarray]:
        """Read-only execution columns (wall_time, op_type code, num_outputs, graph code, file, offset, mode,
        nonfinite flag, device id: -1 none)."""
        ...

    def kind_info(self, kind: int) -> Kind:
        """(graph_id, op_name, output_slot, mode, device_name) of a trace kind code."""
        ...

    def kind_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(order, starts): the rows of kind k ascending in order[starts[k]:starts[k + 1]]."""
        ...

    def folded_steps(self) -> tuple[int, KindSteps] | None:
        """(trace rows covered, the rules' step-to-step reductions per kind folded while indexing them, positions
        as step numbers: kind_steps.py) as the last indexing pass left them; None when indexing could not have every
        row's values: the rules then read the records back (trace_vectors)."""
        ...

    def trace_vectors(self, rows: np.ndarray, summary: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(debug mode of each trace row, its debug vector as tfdbg2-format.md lays it out, float64, NaN-padded to
        11 columns; all NaN for NO_TENSOR and FULL_TENSOR). Reads the rows' records back: for whole-run scans in
        blocks of neighbouring rows (analysis/rules), costing the blocks' bytes. `summary`: only the elements a
        scan reads (reader/health_gather.py SUMMARY_ELEMENTS; the tensor id and device stay NaN), cheaper."""
        ...

    def graph_entries(self) -> list[tuple[str, str, str | None]]:
        """(graph id, name, outer graph id) of every debugged graph, in the order the dump recorded them."""
        ...

    def op_trace_rows(self, graph_id: str, op_name: str, output_slot: int | None = None) -> np.ndarray:
        """Sorted trace rows of an op (one output slot, or all); an op with no trace has none."""
        ...

    def op_entry(self, graph_id: str, op_name: str) -> OpEntry | None:
        """The op's creation record (type, data inputs, frames), or None."""
        ...

    def graph_op_names(self, graph_id: str) -> list[str]:
        """The graph's op names in creation order (function inputs first); [] for an unknown graph."""
        ...

    def execution_io(self, index: int) -> tuple[list[int], list[int], list[int]]:
        """(input tensor ids, output tensor ids, per-output flag 1 non-finite / 0 finite / -1 cannot tell)."""
        ...

    def execution_outputs(self, rows: np.ndarray) -> list[ExecOutputs]:
        """Each execution row's outputs (mode, healths as `execution` decodes them, FULL_TENSOR protos' bytes),
        read in blocks of neighbouring records: for whole-run work (analysis/compare), not one detail per row."""
        ...


class Catalog(Protocol):
    """Every run under a logdir, kept up to date by a background refresher."""

    logdir: str

    def start(self) -> None:
        """Starts the background refresher (idempotent). Before it, queries see what a first pass read."""
        ...

    def runs(self) -> Sequence[RunQueries]:
        """Runs sorted by name."""
        ...

    def run(self, name: str) -> RunQueries:
        """Raises NotFound for an unknown name."""
        ...

    def notices(self) -> list[wire.Notice]:
        """Logdir-level wire.ts Notice list (e.g. 'no_dump_found' with where it looked)."""
        ...

    def has_runs(self) -> bool:
        """Cheap: true once any file set is known under the logdir (drives is_active())."""
        ...

    def has_capsules(self) -> bool:
        """True once a NaN capsule is seen under a local logdir (drives is_active() for a capsule folder)."""
        ...

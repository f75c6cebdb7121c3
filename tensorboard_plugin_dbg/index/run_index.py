"""One run's index: the ingestion of its file sets (ingest.py, the base class), and the query side composed of one
object per concern (trace_queries, exec_queries, alert_queries, graph_queries, source_queries, tensor_queries), all
over the same state (state.py). RunIndex implements protocol.RunQueries by handing each query to its object.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np

from ..reader.file_sets import FileSet
from ..reader.schema import MODE_NAMES
from ..wire import types as wire
from . import exec_outputs, line_ops, record_reads, run_status
from .alert_order import AlertOrder
from .alert_queries import ALERT_TYPE, AlertPage, AlertQueries
from .call_queries import CallQueries
from .device_queries import DeviceQueries
from .exec_queries import ExecutionQueries
from .graph_queries import GraphQueries
from .ingest import RunIngestion
from .kind_steps import KindSteps
from .source_queries import SourceQueries
from .tensor_queries import Source, TensorQueries, TensorRecord
from .trace_filter import NO_FILTER, TraceFilter
from .trace_queries import TraceQueries

logger = logging.getLogger(__name__)
JAX_VERSION_PREFIX = "jax "  # the JAX writer's DebugMetadata.tensorflow_version (tensorboard_plugin_dbg/jax)


def framework_of(tf_version: str | None) -> wire.Framework:
    """Which framework wrote a run, from its metadata's version field."""
    return "jax" if (tf_version or "").startswith(JAX_VERSION_PREFIX) else "tensorflow"


class RunIndex(RunIngestion):
    """The index of one run (see protocol.RunQueries for the query side). `on_complete(run)`: called on the
    refresher's thread each time the dump has been read to its end, before `done` is published (the layers above
    use it to build their whole-run values, e.g. the root cause, so that `done` means they are ready)."""

    def __init__(
        self,
        name: str,
        logdir: str,
        file_sets: list[FileSet],
        on_complete: Callable[[RunIndex], None] | None = None,
    ) -> None:
        super().__init__(name, logdir, file_sets)
        self.on_complete = on_complete
        self.device_queries = DeviceQueries(self)
        self.trace_queries = TraceQueries(self, self.device_queries)
        self.exec_queries = ExecutionQueries(self)
        self.call_queries = CallQueries(self, self.exec_queries)
        self.alert_queries = AlertQueries(self, self.exec_queries)
        self.graph_queries = GraphQueries(self, self.trace_queries)
        self.source_queries = SourceQueries(self)
        self.tensor_queries = TensorQueries(self)

    # ------------------------------------------------------------------------------------ warm-up
    def _warm_quietly(self) -> None:
        """Builds the sorted alert list and, through `on_complete`, the whole-run values of the layers above (every
        alert's role, the root cause) before `done` is published: `done` then means counts, alerts and roles are
        all final, and the first requests after it (the dashboard's alert page, a role filter) find them built
        instead of each paying for the whole-run analysis. A failure is logged and left to the request that needs
        it, which reports it."""
        try:
            self.alert_queries.table()
            if self.on_complete is not None:
                self.on_complete(self)
        except Exception:
            logger.exception("dbg: analysing run %s failed", self.name)

    # ------------------------------------------------------------------------------------ protocol.RunQueries
    def info(self) -> wire.RunInfoBody:
        # Counts from one published set of lengths: O(1), whatever the dump's size (the alert count is the two
        # side tables' lengths; sorting them is only needed for a page of alerts).
        lengths = self.lengths()
        n_alerts = lengths.exec_nf + lengths.trace_nf
        bytes_read = sum(min(s.offset, s.size) for s in self.files if not s.missing)
        bytes_total = sum(s.size for s in self.files if not s.missing)
        return {
            "name": self.name,
            "start_time": self.start_time,
            "tf_version": self.tf_version,
            "framework": framework_of(self.tf_version),
            "tfdbg_run_id": self.run_id,
            "hosts": self.hosts(),
            "debug_modes": [MODE_NAMES.get(m, "UNSPECIFIED") for m in self.debug_modes()],
            "counts": {
                "executions": lengths.execs,
                "graph_executions": lengths.traces,
                "graphs": len(self.graphs),
                "ops": len(self.ops),
                "source_files": len(self.sources),
                "stack_frames": len(self.frames),
                "alerts": n_alerts,
                "alerts_by_type": {ALERT_TYPE: n_alerts} if n_alerts else {},
            },
            "status": {
                "bytes_read": int(bytes_read),
                "bytes_total": int(bytes_total),
                "done": bool(self.done),
                "last_refresh": self.last_refresh,
                "notices": run_status.status_notices(self),
            },
        }

    def alerts(self, begin: int, end: int, alert_type: str | None = None) -> AlertPage:
        return self.alert_queries.page(begin, end, alert_type)

    def alert_table(self, stale_ok: bool = False) -> AlertOrder:
        return self.alert_queries.table(stale_ok)

    def alert_rows(self, page: np.ndarray, src: np.ndarray, rows: np.ndarray, walls: np.ndarray) -> list[wire.Alert]:
        return self.alert_queries.rows(page, src, rows, walls)

    def executions(self, begin: int, end: int) -> wire.ExecutionsResponseBody:
        return self.exec_queries.page(begin, end)

    def execution(self, index: int, max_elements: int = 1000) -> wire.ExecutionDetail:
        return self.exec_queries.detail(index, max_elements)

    def execution_io(self, index: int) -> tuple[list[int], list[int], list[int]]:
        return self.exec_queries.io(index)

    def execution_outputs(self, rows: np.ndarray) -> list[exec_outputs.ExecOutputs]:
        return exec_outputs.execution_outputs(self, rows)

    def graph_executions(
        self,
        begin: int,
        end: int,
        filters: TraceFilter = NO_FILTER,
        call: int | None = None,
        within: np.ndarray | None = None,
    ) -> wire.GraphExecutionsResponseBody:
        if call is None:
            return {**self.trace_queries.page(begin, end, filters, within=within), "call": None}
        one = self.call_queries.call(call)
        rows = one.rows if within is None else np.intersect1d(one.rows, within, assume_unique=True)
        answer = self.trace_queries.page(begin, end, filters, within=rows)
        shown = self.trace_queries.matching(filters, within=one.rows)
        return {**answer, "call": self.call_queries.summary(one, one.rows if shown is None else shown)}

    def device_counts(self) -> wire.DevicesResponseBody:
        return self.device_queries.summary()

    def graph_execution(self, index: int, begin: int = 0, max_elements: int = 1000) -> wire.GraphExecutionDetail:
        return self.trace_queries.detail(index, begin, max_elements)

    def tensor_record(self, source: Source, index: int, output: int | None = None) -> TensorRecord:
        return self.tensor_queries.record(source, index, output)

    def trace_health(self, index: int) -> wire.TensorHealth:
        return self.trace_queries.health(index)

    def kind_rows(self) -> tuple[np.ndarray, np.ndarray]:
        return self.trace_queries.kind_rows()

    def op_trace_rows(self, graph_id: str, op_name: str, output_slot: int | None = None) -> np.ndarray:
        return self.trace_queries.op_rows(graph_id, op_name, output_slot)

    def folded_steps(self) -> tuple[int, KindSteps] | None:
        return self.steps_folded

    def trace_vectors(self, rows: np.ndarray, summary: bool = False) -> tuple[np.ndarray, np.ndarray]:
        return record_reads.trace_vectors(self, rows, summary)

    def graph_entries(self) -> list[tuple[str, str, str | None]]:
        return [(g.graph_id, g.name, g.outer_id) for g in list(self.graphs.values())]

    def graph(self, graph_id: str) -> wire.GraphInfoBody:
        return self.graph_queries.graph(graph_id)

    def op(self, graph_id: str, op_name: str, near: int | None = None) -> wire.OpInfoBody:
        return self.graph_queries.op(graph_id, op_name, near)

    def source_files(self) -> wire.SourceFilesResponseBody:
        return self.source_queries.files()

    def source_file(
        self, index: int, begin_line: int | None = None, end_line: int | None = None
    ) -> wire.SourceFileResponseBody:
        return self.source_queries.file(index, begin_line, end_line)

    def stack_frames(self, ids: Sequence[str]) -> wire.StackFramesResponseBody:
        return self.source_queries.frames(ids)

    def source_line_ops(self, index: int) -> line_ops.FileLineOps:
        return line_ops.file_line_ops(self, index)

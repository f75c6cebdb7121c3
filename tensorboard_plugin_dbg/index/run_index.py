"""One run's index: incremental ingestion of its file sets (this module), and the query side composed of one
object per concern (trace_queries, exec_queries, alert_queries, graph_queries, source_queries, tensor_queries), all
over the same state (state.py). RunIndex implements protocol.RunQueries by handing each query to its object.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..reader import crc32c, debug_values, schema, tfrecord, trace_fast
from ..reader.file_sets import SUFFIXES, FileSet
from ..reader.schema import MODE_NAMES
from . import line_ops, record_reads, run_status
from .alert_order import AlertOrder
from .alert_queries import ALERT_TYPE, AlertQueries
from .call_queries import CallQueries
from .columns import LOC_SHIFT
from .device_queries import DeviceQueries
from .exec_queries import ExecutionQueries
from .graph_queries import GraphQueries
from .source_queries import SourceQueries
from .state import FileState, GraphEntry, OpEntry, RunState, SourceEntry
from .tensor_queries import TensorQueries, TensorRecord
from .trace_queries import TraceQueries

logger = logging.getLogger(__name__)

CHUNK = 1 << 20  # bytes per read at least: the decoders hold ~6x a chunk (CRC word copies, temporaries)
MAX_CHUNK = 8 << 20  # ...unless one record is longer (state.needed)
STEPS = 4  # steps per chunk: with the carried step (trace_periodic.Carry) none is decoded in full, so 4 reads as fast
# as the 6 needed before, and its transient memory (the decoders hold ~6x a chunk) is ~2 MiB lower at 1 M traces
# Which DebugEvent kinds each file holds: a record of another kind is damage, not data to mix in.
_WHAT_BY_SUFFIX = {
    "metadata": ("debug_metadata",),
    "source_files": ("source_file",),
    "stack_frames": ("stack_frame_with_id",),
    "execution": ("execution",),
    "graphs": ("graph_op_creation", "debugged_graph", "debugged_device"),
}


class RunIndex(RunState):
    """The index of one run (see protocol.RunQueries for the query side). `on_complete(run)`: called on the
    refresher's thread each time the dump has been read to its end, before `done` is published (the layers above
    use it to build their whole-run values, e.g. the root cause, so that `done` means they are ready)."""

    def __init__(
        self,
        name: str,
        logdir: str,
        file_sets: list[FileSet],
        on_complete: Callable[[RunIndex], None] | None = None,
    ):
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
        # One tuple per distinct creation stack, shared by the ops made through it: every op of a line of one trace
        # has the same stack, and one list of frame-id strings per op was 657 k strings (~56 MB) for bench's
        # 21 k-op graph, whose ops have 11 distinct stacks.
        self._stacks: dict[tuple[str, ...], tuple[str, ...]] = {}

    # ------------------------------------------------------------------------------------ ingestion
    def refresh(self) -> bool:
        """One pass over every file; returns True when anything new was read. Never raises."""
        with self.ingest_lock:
            before = self._progress()
            ordered = sorted(
                range(len(self.files)), key=lambda i: (SUFFIXES.index(self.files[i].suffix), self.files[i].path)
            )
            failed = set()  # files whose read raised in this pass: settled until the next (their notice says why)
            for code in ordered:
                state = self.files[code]
                if not self.reads_file(state):
                    continue
                if not run_status.read_file_noting_failure(self, code, state):
                    failed.add(code)
            crc32c.release_workspace()
            self.last_refresh = time.time()
            changed = self._progress() != before
            # A file that cannot be read (a directory in its place, no permission) must not leave the run "still
            # indexing" forever: done means nothing readable is left; the failed file's notice tells the rest.
            complete = all(
                s.offset >= s.size or s.missing or code in failed
                for code, s in enumerate(self.files)
                if self.reads_file(s)
            )
            if changed:
                self.version += 1  # before `done`: whoever sees done = True also sees the final version
                if complete:
                    record_reads.trim_heap()  # the pass's freed chunk buffers go back before the analysis peaks
                    self._warm_quietly()
                record_reads.trim_heap()
            self.done = complete
            return changed

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

    def _progress(self):
        return tuple(s.offset for s in self.files), len(self.damages), len(self.graphs), len(self.frames)

    def _read_file(self, code: int, state: FileState) -> None:
        if not run_status.stat_file(state):
            return
        while state.offset < state.size:
            # Chunks small enough to keep the transient memory a few MB (the decoders hold ~6x a chunk), but
            # holding STEPS training steps: the periodic decoder proves each step against the one before (the first
            # against the last step of the previous chunk, trace_periodic.Carry).
            step = min(tfrecord.cycle_bytes(state.hint) * STEPS + 4096, MAX_CHUNK)
            want = min(state.size - state.offset, max(CHUNK, step, state.needed))
            with open(state.path, "rb") as f:
                f.seek(state.offset)
                data = f.read(want)
            if not data:
                break
            buf = np.frombuffer(data, dtype=np.uint8)
            result = tfrecord.scan(buf, state.offset, state.resyncing, state.hint)
            state.hint = result.tail
            for damage in result.damages:
                self.damages.setdefault((code, damage.offset), damage.reason)
            if len(result.starts):
                if state.suffix == "graph_execution_traces":
                    self._reserve_traces(
                        len(result.starts), result.next_offset - state.offset, state.size - state.offset
                    )
                self._ingest(code, state, result)
                self.publish()
            progressed = result.next_offset > state.offset
            state.offset, state.resyncing, state.needed = result.next_offset, result.resyncing, result.needed
            if not progressed or (state.needed and state.offset + state.needed > state.size):
                break

    def _reserve_traces(self, records: int, nbytes: int, remaining: int) -> None:
        """Sizes the trace columns for the whole file from this chunk's record density (a dump's trace records
        are nearly the same size), so ingesting a big file never copies them to grow. Reserved rows cost no
        resident memory until written (Columns.reserve); too low an estimate just falls back to growing."""
        if nbytes <= 0 or remaining <= nbytes:
            return
        expect = len(self.traces) + int(records * remaining / nbytes * 1.02) + 1024
        if expect > self.traces.capacity():
            self.traces.reserve(expect)
            self.trace_nf.reserve(expect)  # at most one row per trace

    def _ingest(self, code: int, state: FileState, result: tfrecord.Scan) -> None:
        buf, base = result.buf, result.base
        if state.suffix == "graph_execution_traces":
            batch = trace_fast.decode_traces(buf, result.starts, result.lengths, self.kinds, result.words, state.carry)
            for start in batch.unparsed:
                self.damages.setdefault((code, base + start - 12), "record does not decode as a trace")
            first_row = len(self.traces)
            # rows first, then the side table that points at them: a concurrent reader never sees a dangling row
            self.traces.append(
                {"kind": batch.kind, "wall_time": batch.wall_time, "loc": (batch.offset + base) | (code << LOC_SHIFT)}
            )
            if len(batch.nonfinite_rows):
                self.trace_nf.append({"row": batch.nonfinite_rows + first_row})
            return
        data = buf.tobytes() if state.suffix != "source_files" else None
        pending: dict = {}
        for start, length in zip(result.starts.tolist(), result.lengths.tolist()):
            payload = data[start : start + length] if data is not None else buf[start : start + length].tobytes()
            event = schema.parse_event(payload)
            what = event.WhichOneof("what") if event is not None else None
            if what is None:
                self.damages.setdefault((code, base + start - 12), "record does not decode as a DebugEvent")
                continue
            if what not in _WHAT_BY_SUFFIX[state.suffix]:  # e.g. another dump file copied under this name
                self.damages.setdefault((code, base + start - 12), f"a {what} record in the {state.suffix} file")
                continue
            if what == "execution":
                self._ingest_execution(code, event, base + start, pending)
            else:
                self._ingest_event(code, state, event, what, base + start)
        self._flush_executions(pending)

    def _ingest_event(self, code: int, state: FileState, event, what: str, offset: int) -> None:
        if what == "debug_metadata":
            self.tf_version = event.debug_metadata.tensorflow_version or None
            self.run_id = event.debug_metadata.tfdbg_run_id or None
            self.start_time = event.wall_time
        elif what == "source_file":
            sf = event.source_file
            self.sources.append(SourceEntry(sf.file_path, sf.host_name, len(sf.lines), code, offset))
        elif what == "stack_frame_with_id":
            fr = event.stack_frame_with_id
            flc = fr.file_line_col
            self.frames[fr.id] = (int(flc.file_index), int(flc.line), flc.func, state.host)
        elif what == "debugged_graph":
            g = event.debugged_graph
            entry = self.graphs.get(g.graph_id)
            if entry is None:
                self.graphs[g.graph_id] = GraphEntry(g.graph_id, g.graph_name, g.outer_context_id or None)
            else:
                entry.name, entry.outer_id = g.graph_name, g.outer_context_id or None
        elif what == "graph_op_creation":
            self._ingest_op(event.graph_op_creation, state.host)
        elif what == "debugged_device":
            self.devices[int(event.debugged_device.device_id)] = event.debugged_device.device_name

    def _ingest_op(self, op, host: str) -> None:
        inputs = []
        for name in op.input_names:
            producer, _, slot = name.rpartition(":")
            inputs.append((producer, int(slot)) if producer and slot.isdigit() else (name, 0))
        entry = OpEntry(
            op.graph_id,
            op.op_name,
            op.op_type,
            inputs,
            int(op.num_outputs),
            list(op.output_tensor_ids),
            self._stack(op.code_location.stack_frame_ids),
            op.code_location.host_name or host,
            op.device_name or None,
        )
        key = (op.graph_id, op.op_name)
        if key not in self.ops:
            graph = self.graphs.get(op.graph_id)
            if graph is None:  # an op may precede its graph record; the record fills in the rest later
                graph = self.graphs[op.graph_id] = GraphEntry(op.graph_id, op.graph_name, None)
            graph.op_names.append(op.op_name)
        self.ops[key] = entry
        for input_slot, (producer, out_slot) in enumerate(inputs):
            self.consumers.setdefault((op.graph_id, producer), []).append((out_slot, op.op_name, input_slot))

    def _stack(self, frame_ids) -> tuple[str, ...]:
        stack = tuple(frame_ids)
        return self._stacks.setdefault(stack, stack)

    def _intern(self, table: list, codes: dict, value: str) -> int:
        code = codes.get(value)
        if code is None:
            code = codes[value] = len(table)
            table.append(value)
        return code

    def _ingest_execution(self, code: int, event, offset: int, pending: dict) -> None:
        """Decodes one execution into `pending` (lists per column), appended in one go by _flush_executions."""
        ex = event.execution
        mode = int(ex.tensor_debug_mode)
        self.exec_modes.add(mode)
        totals: tuple[float, ...] | None = None
        for proto in ex.tensor_protos:
            counts = debug_values.nonfinite_counts(mode, proto)
            if counts is not None:
                totals = (
                    counts
                    if totals is None
                    else tuple(-1.0 if a < 0 or b < 0 else a + b for a, b in zip(totals, counts))
                )
        row = len(self.execs) + len(pending.setdefault("wall_time", []))
        if totals is not None:
            pending.setdefault("nf", []).append((row,) + tuple(totals))
        graph = self._intern(self.exec_graph_ids, self._exec_graph_codes, ex.graph_id) if ex.graph_id else -1
        # TF records a device id per output (names in `debugged_device`); an op's outputs are on its device, a
        # function's may differ (the execution's detail lists each): the first one is what lists and filters show.
        device = int(ex.output_tensor_device_ids[0]) if len(ex.output_tensor_device_ids) else -1
        for name, value in (
            ("wall_time", event.wall_time),
            ("op_type", self._intern(self.exec_op_types, self._exec_type_codes, ex.op_type)),
            ("num_outputs", ex.num_outputs),
            ("graph", graph),
            ("file", code),
            ("offset", offset),
            ("mode", mode),
            ("nonfinite", totals is not None),
            ("device", device),
        ):
            pending.setdefault(name, []).append(value)

    def _flush_executions(self, pending: dict) -> None:
        nf = pending.pop("nf", [])
        if pending:  # rows before the side table that points at them (see above)
            self.execs.append({name: np.array(values) for name, values in pending.items()})
        if nf:
            arr = np.array(nf, dtype=np.float64)
            self.exec_nf.append(
                {
                    "row": arr[:, 0].astype(np.int64),
                    "neg_inf": arr[:, 1],
                    "pos_inf": arr[:, 2],
                    "nan": arr[:, 3],
                    "size": arr[:, 4],
                }
            )

    # ------------------------------------------------------------------------------------ protocol.RunQueries
    def info(self) -> dict[str, Any]:
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

    def alerts(self, begin: int, end: int, alert_type: str | None = None) -> dict[str, Any]:
        return self.alert_queries.page(begin, end, alert_type)

    def alert_table(self, stale_ok: bool = False) -> AlertOrder:
        return self.alert_queries.table(stale_ok)

    def alert_rows(self, page: np.ndarray, src: np.ndarray, rows: np.ndarray, walls: np.ndarray) -> list:
        return self.alert_queries.rows(page, src, rows, walls)

    def executions(self, begin: int, end: int) -> dict[str, Any]:
        return self.exec_queries.page(begin, end)

    def execution(self, index: int, max_elements: int = 1000) -> dict[str, Any]:
        return self.exec_queries.detail(index, max_elements)

    def execution_io(self, index: int) -> tuple[list[int], list[int], list[int]]:
        return self.exec_queries.io(index)

    def graph_executions(
        self,
        begin: int,
        end: int,
        op_type: str | None = None,
        op_name: str | None = None,
        graph_id: str | None = None,
        only_nonfinite: bool = False,
        device: str | None = None,
        host: str | None = None,
        call: int | None = None,
    ) -> dict[str, Any]:
        filters = (op_type, op_name, graph_id, only_nonfinite, device, host)
        if call is None:
            return {**self.trace_queries.page(begin, end, *filters), "call": None}
        one = self.call_queries.call(call)
        answer = self.trace_queries.page(begin, end, *filters, within=one.rows)
        shown = self.trace_queries.matching(*filters, within=one.rows)
        return {**answer, "call": self.call_queries.summary(one, one.rows if shown is None else shown)}

    def device_counts(self) -> dict[str, Any]:
        return self.device_queries.summary()

    def graph_execution(self, index: int, begin: int = 0, max_elements: int = 1000) -> dict[str, Any]:
        return self.trace_queries.detail(index, begin, max_elements)

    def tensor_record(self, source: str, index: int, output: int | None = None) -> TensorRecord:
        return self.tensor_queries.record(source, index, output)

    def trace_health(self, index: int) -> dict[str, Any]:
        return self.trace_queries.health(index)

    def kind_rows(self) -> tuple[np.ndarray, np.ndarray]:
        return self.trace_queries.kind_rows()

    def op_trace_rows(self, graph_id: str, op_name: str, output_slot: int | None = None) -> np.ndarray:
        return self.trace_queries.op_rows(graph_id, op_name, output_slot)

    def trace_vectors(self, rows: np.ndarray, summary: bool = False) -> tuple[np.ndarray, np.ndarray]:
        return record_reads.trace_vectors(self, rows, summary)

    def graph_entries(self) -> list[tuple[str, str, str | None]]:
        return [(g.graph_id, g.name, g.outer_id) for g in list(self.graphs.values())]

    def graph(self, graph_id: str) -> dict[str, Any]:
        return self.graph_queries.graph(graph_id)

    def op(self, graph_id: str, op_name: str, near: int | None = None) -> dict[str, Any]:
        return self.graph_queries.op(graph_id, op_name, near)

    def source_files(self) -> dict[str, Any]:
        return self.source_queries.files()

    def source_file(self, index: int, begin_line: int | None = None, end_line: int | None = None) -> dict[str, Any]:
        return self.source_queries.file(index, begin_line, end_line)

    def stack_frames(self, ids: Sequence[str]) -> dict[str, Any]:
        return self.source_queries.frames(ids)

    def source_line_ops(self, index: int) -> line_ops.FileLineOps:
        return line_ops.file_line_ops(self, index)

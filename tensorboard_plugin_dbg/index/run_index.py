"""One run's index: incremental ingestion of its file sets into numpy columns and small per-op tables.

Executions and graph execution traces are columns (no Python object per record); everything bulky (debug values,
stack frame ids, tensors, source text) stays on disk and is read back by offset on demand. Graphs, ops, stack
frames and source-file headers are small and kept as plain Python structures. Queries live in queries.py.
Ingestion runs on one thread at a time (the catalog's refresher); readers use published snapshots and never block
it for long.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections import OrderedDict
from typing import Any

import numpy as np

from ..reader import crc32c, debug_values, schema, tfrecord, trace_periodic, traces
from ..reader.file_sets import SUFFIXES, FileSet
from . import record_reads, run_status
from .columns import Columns, Lengths
from .protocol import RecordGone
from .queries import QueriesMixin

logger = logging.getLogger(__name__)
CHUNK = 1 << 20  # bytes per read at least: the decoders hold ~6x a chunk (CRC word copies, temporaries)
MAX_CHUNK = 8 << 20  # ...unless one record is longer (state.needed)
STEPS = 4  # steps per chunk: with the carried step (trace_periodic.Carry) none is decoded in full, so 4 reads as fast
# as the 6 needed before, and its transient memory (the decoders hold ~6x a chunk) is ~2 MiB lower at 1 M traces
LOC_SHIFT = 48  # trace location = file code << 48 | payload offset (files up to 256 TiB)
LOC_MASK = (1 << LOC_SHIFT) - 1
# Which DebugEvent kinds each file holds: a record of another kind is damage, not data to mix in.
_WHAT_BY_SUFFIX = {
    "metadata": ("debug_metadata",),
    "source_files": ("source_file",),
    "stack_frames": ("stack_frame_with_id",),
    "execution": ("execution",),
    "graphs": ("graph_op_creation", "debugged_graph", "debugged_device"),
}
_NONSTREAM_ORDER = ("metadata", "source_files", "stack_frames", "graphs", "execution")


@dataclasses.dataclass
class FileState:
    path: str
    suffix: str
    host: str
    offset: int = 0  # next byte to read
    size: int = 0
    resyncing: bool = False
    needed: int = 0
    missing: bool = False
    hint: Any = None  # tfrecord.Scan.tail of the last chunk read: lets the next chunk's scan predict at once
    carry: Any = dataclasses.field(default_factory=trace_periodic.Carry)  # its last step, for the next decode


@dataclasses.dataclass
class SourceEntry:
    path: str
    host: str
    line_count: int
    file_code: int
    offset: int


@dataclasses.dataclass
class OpEntry:
    graph_id: str
    op_name: str
    op_type: str
    inputs: list  # [(producer op name, output slot)]
    num_outputs: int
    output_tensor_ids: list
    stack_frame_ids: list
    host: str | None
    device_name: str | None


@dataclasses.dataclass
class GraphEntry:
    graph_id: str
    name: str
    outer_id: str | None
    op_names: list = dataclasses.field(default_factory=list)


class RunIndex(QueriesMixin):
    """The index of one run (see protocol.RunQueries for the query side)."""

    def __init__(self, name: str, logdir: str, file_sets: list[FileSet]):
        self.name = name
        self.logdir = logdir
        self.directory = file_sets[0].directory
        self.file_sets: list[FileSet] = []
        self.files: list[FileState] = []
        self._ingest_lock = threading.Lock()
        self._cache_lock = threading.Lock()
        self._record_cache: OrderedDict = OrderedDict()
        self._source_cache: OrderedDict = OrderedDict()
        self.tf_version: str | None = None
        self.run_id: str | None = None
        self.start_time: float | None = None
        self.sources: list[SourceEntry] = []
        self.frames: dict[str, tuple] = {}  # id -> (file_index, line, func, host)
        self.graphs: dict[str, GraphEntry] = {}
        self.ops: dict[tuple[str, str], OpEntry] = {}
        self.consumers: dict[tuple[str, str], list] = {}  # producer -> [(output_slot, consumer, input_slot)]
        self.devices: dict[int, str] = {}
        self.exec_op_types: list[str] = []
        self._exec_type_codes: dict[str, int] = {}
        self.exec_graph_ids: list[str] = []
        self._exec_graph_codes: dict[str, int] = {}
        self.execs = Columns(
            {
                "wall_time": "f8",
                "op_type": "i4",
                "num_outputs": "i4",
                "graph": "i4",
                "file": "u2",
                "offset": "i8",
                "mode": "i1",
                "nonfinite": "u1",
            }
        )
        self.exec_nf = Columns({"row": "i8", "neg_inf": "f8", "pos_inf": "f8", "nan": "f8", "size": "f8"})
        # Per trace: kind code, wall time, and where its record is (file code << 48 | payload offset): 20 bytes.
        self.traces = Columns({"kind": "i4", "wall_time": "f8", "loc": "i8"})
        # Rows whose debug value shows a non-finite element (sorted); counts are read back from the record.
        self.trace_nf = Columns({"row": "u4"})
        # The lengths readers may use: one tuple, swapped in after every batch once all its appends are done.
        self._lengths = Lengths()
        self.kinds = traces.TraceKinds()
        self.exec_modes: set[int] = set()
        self.damages: dict[tuple[int, int], str] = {}
        self.problems: list[dict[str, Any]] = []  # refresh failures (kept short)
        self.last_refresh: float | None = None
        self.done = False
        self.version = 0
        self._derived: dict[str, tuple] = {}  # query-side caches keyed by name -> (version key, value)
        self.add_file_sets(file_sets)

    # ----------------------------------------------------------------------------------------- ingestion
    def add_file_sets(self, file_sets: list[FileSet]) -> None:
        known = {fs.prefix for fs in self.file_sets}
        for fs in file_sets:
            if fs.prefix in known:
                continue
            self.file_sets.append(fs)
            self.file_sets.sort(key=lambda s: (s.epoch, s.prefix))
            for suffix in SUFFIXES:
                self.files.append(FileState(fs.path(suffix), suffix, fs.host))

    def _primary_prefix(self) -> str:
        return self.file_sets[0].prefix

    def refresh(self) -> bool:
        """One pass over every file; returns True when anything new was read. Never raises."""
        with self._ingest_lock:
            before = self._progress()
            primary = self._primary_prefix()
            ordered = sorted(
                range(len(self.files)), key=lambda i: (SUFFIXES.index(self.files[i].suffix), self.files[i].path)
            )
            failed = set()  # files whose read raised in this pass: settled until the next (their notice says why)
            for code in ordered:
                state = self.files[code]
                is_primary = os.path.basename(state.path).startswith(primary + ".")
                if state.suffix != "graph_execution_traces" and not is_primary:
                    continue  # like TF's reader: everything but traces comes from the earliest file set
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
                if s.suffix == "graph_execution_traces" or os.path.basename(s.path).startswith(primary + ".")
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
        """Builds the sorted alert list and every alert's role (QueriesMixin.warm) before `done` is published:
        `done` then means counts, alerts and roles are all final, and the first requests after it (the
        dashboard's alert page, a role filter) find them built instead of each paying for the whole-run analysis.
        A failure is logged and left to the request that needs it, which reports it."""
        try:
            self.warm()
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
                self._publish()
            progressed = result.next_offset > state.offset
            state.offset, state.resyncing, state.needed = result.next_offset, result.resyncing, result.needed
            if not progressed or (state.needed and state.offset + state.needed > state.size):
                break

    def lengths(self) -> Lengths:
        """A consistent set of row counts: query with these, not len() of each column (see columns.Lengths)."""
        return self._lengths

    def _publish(self) -> None:
        self._lengths = Lengths(len(self.execs), len(self.exec_nf), len(self.traces), len(self.trace_nf))

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
            batch = traces.decode_traces(buf, result.starts, result.lengths, self.kinds, result.words, state.carry)
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
            list(op.code_location.stack_frame_ids),
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
        totals = None
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
        for name, value in (
            ("wall_time", event.wall_time),
            ("op_type", self._intern(self.exec_op_types, self._exec_type_codes, ex.op_type)),
            ("num_outputs", ex.num_outputs),
            ("graph", graph),
            ("file", code),
            ("offset", offset),
            ("mode", mode),
            ("nonfinite", totals is not None),
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

    # ------------------------------------------------------------------------------------ reading back
    def read_trace_event(self, index: int):
        """The DebugEvent of graph execution trace `index` (bounds checked by the caller)."""
        loc = int(self.traces.view("loc")[index])
        return self.read_event(loc >> LOC_SHIFT, loc & LOC_MASK)

    def trace_file_code(self, index: int) -> int:
        return int(self.traces.view("loc")[index]) >> LOC_SHIFT

    def read_event(self, file_code: int, offset: int):
        """The DebugEvent whose payload starts at `offset` in file `file_code` (small LRU cache)."""
        key = (file_code, offset)
        with self._cache_lock:
            event = self._record_cache.get(key)
            if event is not None:
                self._record_cache.move_to_end(key)
                return event
        path = self.files[file_code].path
        try:
            with open(path, "rb") as f:
                f.seek(offset - 12)
                head = f.read(12)
                length = int.from_bytes(head[:8], "little")
                data = f.read(length) if len(head) == 12 and length <= tfrecord.MAX_RECORD else b""
        except OSError as exc:
            raise RecordGone(f"{os.path.basename(path)} cannot be read back: {exc.strerror or exc}") from exc
        # an empty read parses as an empty event: check the bytes are all there (the file may have shrunk)
        event = schema.parse_event(data) if len(head) == 12 and len(data) == length else None
        if event is None:
            raise RecordGone(
                f"the record at byte {offset - 12} of {os.path.basename(path)} can no longer be read "
                "(the file shrank or changed after it was indexed)"
            )
        with self._cache_lock:
            self._record_cache[key] = event
            if len(self._record_cache) > 256:
                self._record_cache.popitem(last=False)
        return event

    def source_lines(self, index: int) -> list[str]:
        entry = self.sources[index]
        with self._cache_lock:
            lines = self._source_cache.get(index)
            if lines is not None:
                return lines
        lines = list(self.read_event(entry.file_code, entry.offset).source_file.lines)
        with self._cache_lock:
            self._source_cache[index] = lines
            if len(self._source_cache) > 16:
                self._source_cache.popitem(last=False)
        return lines

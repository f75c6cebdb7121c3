"""What a run's index holds, and reading it back: the state the ingester (ingest.py) writes and the query
objects (trace_queries, exec_queries, alert_queries, graph_queries, source_queries) read.

Executions and graph execution traces are columns (no Python object per record); everything bulky (debug values,
stack frame ids, tensors, source text) stays on disk and is read back by offset on demand. Graphs, ops, stack
frames and source-file headers are small and kept as plain Python structures. One thread writes (the catalog's
refresher, under `ingest_lock`); readers use the published lengths (`lengths()`) and never block it for long.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from typing_extensions import NotRequired

from ..reader import schema, storage, tfrecord, trace_periodic, traces
from ..reader.file_sets import SUFFIXES, FileSet
from ..reader.traces import Kind
from ..wire import types as wire
from .columns import LOC_MASK, LOC_SHIFT, Columns, Lengths
from .derived import DerivedCache
from .errors import NotFound, RecordGone

_CACHED_MAX = 1 << 20  # read_event keeps records up to this long in its LRU cache


class Problem(wire.Notice):
    """A problem notice as the run (or the catalog) keeps it: with the traceback of its failure, never sent."""

    trace: NotRequired[str]


def notice_of(problem: Problem) -> wire.Notice:
    """The notice a problem shows: the problem without its traceback."""
    return cast(wire.Notice, {k: v for k, v in problem.items() if k != "trace"})


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
    inputs: list[tuple[str, int]]  # [(producer op name, output slot)]
    num_outputs: int
    output_tensor_ids: list[int]
    stack_frame_ids: Sequence[str]  # a tuple shared by every op made through the same stack (run_index._stack)
    host: str | None
    device_name: str | None


@dataclasses.dataclass
class GraphEntry:
    graph_id: str
    name: str
    outer_id: str | None
    op_names: list[str] = dataclasses.field(default_factory=list)


class RunState:
    """One run's ingested data (protocol.RunQueries is implemented over it by RunIndex)."""

    def __init__(self, name: str, logdir: str, file_sets: list[FileSet]):
        self.name = name
        self.logdir = logdir
        self.directory = file_sets[0].directory
        self.file_sets: list[FileSet] = []
        self.files: list[FileState] = []
        self.ingest_lock = threading.Lock()  # held by the refresher for a pass (lock order: derived.py)
        self._cache_lock = threading.Lock()
        self._record_cache: OrderedDict[tuple[int, int], Any] = OrderedDict()  # Any: a DebugEvent
        self._source_cache: OrderedDict[int, list[str]] = OrderedDict()
        self.tf_version: str | None = None
        self.run_id: str | None = None
        self.start_time: float | None = None
        self.sources: list[SourceEntry] = []
        self.frames: dict[str, tuple[int, int, str, str]] = {}  # id -> (file_index, line, func, host)
        self.graphs: dict[str, GraphEntry] = {}
        self.ops: dict[tuple[str, str], OpEntry] = {}
        # producer -> [(output_slot, consumer, input_slot)]
        self.consumers: dict[tuple[str, str], list[tuple[int, str, int]]] = {}
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
                "device": "i4",  # the first output's device id (`devices`), -1 when it has no output
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
        self.problems: list[Problem] = []  # refresh failures (kept short)
        self.last_refresh: float | None = None
        self.done = False
        self.version = 0
        self.derived = DerivedCache()  # every whole-run value of the index and the analysis (derived.py)
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

    # ------------------------------------------------------------------------------------ published lengths
    def lengths(self) -> Lengths:
        """A consistent set of row counts: query with these, not len() of each column (see columns.Lengths)."""
        return self._lengths

    def publish(self) -> None:
        self._lengths = Lengths(len(self.execs), len(self.exec_nf), len(self.traces), len(self.trace_nf))

    # ------------------------------------------------------------------------------------ rules on the files
    def reads_file(self, state: FileState) -> bool:
        """Like TF's reader: every graph execution traces file, and everything else from the earliest file set
        only (a multi-host run's other hosts repeat its metadata, sources, frames and graphs)."""
        if state.suffix == "graph_execution_traces":
            return True
        return os.path.basename(state.path).startswith(self.file_sets[0].prefix + ".")

    def rel_path(self, path: str) -> str:
        return storage.relpath(path, self.directory)

    def hosts(self) -> list[str]:
        return sorted({fs.host for fs in self.file_sets})

    def debug_modes(self) -> list[int]:
        # Every `runs` answer asks twice (info and its notices) and every open dashboard polls `runs`: a walk over
        # every trace kind (thousands) was half of that route's cost. Both sets only grow, so their sizes are the key.
        # Not built under the derived lock: whole-run builds hold it, and a `runs` poll must never wait for one;
        # two threads that miss together just compute the same short list twice.
        key = (len(self.kinds), len(self.exec_modes))
        modes = self.derived.peek("debug_modes", key)
        if modes is None:
            modes = sorted(self.exec_modes | {k[3] for k in list(self.kinds.kinds)})
            self.derived.put("debug_modes", key, modes)
        return modes

    # ------------------------------------------------------------------------------------ columns, read-only
    def kind_info(self, kind: int) -> Kind:
        """(graph_id, op_name, output_slot, mode, device_name) of a trace kind."""
        return self.kinds.kinds[kind]

    def op_entry(self, graph_id: str, op_name: str) -> OpEntry | None:
        return self.ops.get((graph_id, op_name))

    def graph_op_names(self, graph_id: str) -> list[str]:
        entry = self.graphs.get(graph_id)
        return list(entry.op_names) if entry is not None else []

    def trace_arrays(self) -> dict[str, np.ndarray]:
        """Read-only views of the trace columns: `kind` (int32 code, see kind_info), `wall_time` (float64),
        `loc` (file code << 48 | offset), and `nonfinite_rows` (sorted uint32 rows whose value is non-finite)."""
        lengths = self.lengths()
        out = {name: self.traces.view(name, lengths.traces) for name in ("kind", "wall_time", "loc")}
        out["nonfinite_rows"] = self.trace_nf.view("row", lengths.trace_nf)
        for arr in out.values():
            arr.flags.writeable = False
        return out

    def execution_arrays(self) -> dict[str, np.ndarray]:
        """Read-only views of the execution columns (wall_time, op_type code, num_outputs, graph code, file,
        offset, mode, nonfinite flag, device id); decode codes with exec_op_types / exec_graph_ids / devices."""
        n, arrays = self.execs.snapshot()
        n = min(n, self.lengths().execs)
        out = {name: arr[:n] for name, arr in arrays.items()}
        for arr in out.values():
            arr.flags.writeable = False
        return out

    def graph_chain_ids(self, graph_id: str) -> list[str]:
        """The graph's outer graphs, outermost first, then the graph itself."""
        chain, seen = [], set()
        g: str | None = graph_id
        while g and g not in seen:
            seen.add(g)
            chain.append(g)
            entry = self.graphs.get(g)
            g = entry.outer_id if entry else None
        return chain[::-1]

    def graph_chain(self, graph_id: str) -> list[wire.GraphRef]:
        """wire.ts GraphRef of each graph of graph_chain_ids."""
        return [
            {"graph_id": g, "name": self.graphs[g].name if g in self.graphs else ""}
            for g in self.graph_chain_ids(graph_id)
        ]

    # ------------------------------------------------------------------------------------ reading back
    def trace_event(self, index: int) -> Any:
        """The DebugEvent of graph execution trace `index` (NotFound past the published length)."""
        n = self.lengths().traces
        if not 0 <= index < n:
            raise NotFound(f"graph execution {index} not found (run has {n})")
        return self.read_trace_event(index)

    def read_trace_event(self, index: int) -> Any:
        """The DebugEvent of graph execution trace `index` (bounds checked by the caller)."""
        loc = int(self.traces.view("loc")[index])
        return self.read_event(loc >> LOC_SHIFT, loc & LOC_MASK)

    def trace_file_code(self, index: int) -> int:
        return int(self.traces.view("loc")[index]) >> LOC_SHIFT

    def read_event(self, file_code: int, offset: int) -> Any:
        """The DebugEvent whose payload starts at `offset` in file `file_code` (small LRU cache)."""
        key = (file_code, offset)
        with self._cache_lock:
            event = self._record_cache.get(key)
            if event is not None:
                self._record_cache.move_to_end(key)
                return event
        path = self.files[file_code].path
        try:
            with storage.open_read(path) as f:
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
        if length > _CACHED_MAX:  # a big FULL_TENSOR record: 256 of them would be GBs
            return event
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

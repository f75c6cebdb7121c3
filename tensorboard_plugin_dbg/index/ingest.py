"""Incremental ingestion of one run's file sets: each refresh pass reads what is new in every file, in chunks, and
appends it to the run's state (state.py). The query side over that state is run_index.RunIndex."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..reader import big_record, crc32c, debug_values, schema, step_values, storage, tfrecord, trace_fast
from ..reader.file_sets import SUFFIXES, FileSet
from . import record_reads, run_status
from .columns import LOC_SHIFT
from .kind_steps import KindSteps
from .state import FileState, GraphEntry, OpEntry, RunState, SourceEntry

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


# execution columns decoded but not yet appended: column name -> values (numbers and flags; "nf": the rows' non-finite
# count tuples), appended in one go by _flush_executions
_Pending = dict[str, list[Any]]


def chunk_bytes(cycle: int) -> int:
    """Bytes to read next, given the bytes of one training step of the records just read (0: none seen): a whole
    number of steps, at least STEPS and CHUNK, so that every chunk starts at the same place of a step as the one
    before and the step it carries is laid out as the last one was (trace_periodic.Carry keeps its identity mask
    instead of painting it anew per chunk); MAX_CHUNK at most."""
    if not cycle:
        return CHUNK
    return max(CHUNK, min(cycle * max(STEPS, -(-CHUNK // cycle)), MAX_CHUNK))


class RunIngestion(RunState):
    """A run's state and the passes that fill it (`refresh`). run_index.RunIndex adds the queries, and builds the
    whole-run values when a pass reads the dump to its end (`_warm_quietly`)."""

    def __init__(self, name: str, logdir: str, file_sets: list[FileSet]):
        super().__init__(name, logdir, file_sets)
        # One tuple per distinct creation stack, shared by the ops made through it: every op of a line of one trace
        # has the same stack, and one list of frame-id strings per op was 657 k strings (~56 MB) for bench's
        # 21 k-op graph, whose ops have 11 distinct stacks.
        self._stacks: dict[tuple[str, ...], tuple[str, ...]] = {}
        # The rules' step-to-step reductions, folded as trace rows are appended (columns: shape signature, dtype);
        # None once a row's values could not be had while indexing (the rules then read the records back)
        self._steps: KindSteps | None = KindSteps(None, columns=2)
        # (trace rows it covers, a copy of _steps) as the last pass that changed anything left them: folded_steps
        self.steps_folded: tuple[int, KindSteps] | None = None

    def refresh(self) -> bool:
        """One pass over every file; returns True when anything new was read. Never raises."""
        with self.ingest_lock:
            before = self._progress()
            ordered = sorted(
                range(len(self.files)), key=lambda i: (SUFFIXES.index(self.files[i].suffix), self.files[i].path)
            )
            failed = set()  # files whose read raised in this pass: settled until the next (their notice says why)
            self._stat_all()
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
                self.steps_folded = (len(self.traces), self._steps.copy()) if self._steps is not None else None
                self.version += 1  # before `done`: whoever sees done = True also sees the final version
                if complete:
                    record_reads.trim_heap()  # the pass's freed chunk buffers go back before the analysis peaks
                    self._warm_quietly()
                record_reads.trim_heap()
            self.done = complete
            return changed

    def _stat_all(self) -> None:
        """Every file the pass will read gets its size first: the progress (bytes read of bytes on disk) is then
        over the whole run from the first file on, and never reads 100 % before the largest file is counted; and
        the first chunk sizes the trace columns for every host's traces file (_traces_left)."""
        for state in self.files:
            if self.reads_file(state):
                try:
                    run_status.stat_file(state)
                except OSError:
                    pass  # its read says why, as the file's notice

    def _progress(self) -> tuple[tuple[int, ...], int, int, int]:
        return tuple(s.offset for s in self.files), len(self.damages), len(self.graphs), len(self.frames)

    def read_file(self, code: int, state: FileState) -> None:
        """Reads what is new in file `code` (its `state`): a pass's step for one file, which
        run_status.read_file_noting_failure runs so that a failure becomes the file's notice. Raises OSError when
        the file cannot be read."""
        if not run_status.stat_file(state):
            return
        while state.offset < state.size:
            if self._big_trace_ahead(state):
                if state.offset + state.needed > state.size:
                    break  # not all written yet: the next pass starts from the same offset
                streamed = self._stream_big(code, state)
                if streamed == big_record.PARTIAL:
                    break
                if streamed != big_record.FALLBACK:
                    continue
            # Chunks small enough to keep the transient memory a few MB (the decoders hold ~6x a chunk), but
            # holding STEPS training steps: the periodic decoder proves each step against the one before (the first
            # against the last step of the previous chunk, trace_periodic.Carry).
            want = min(state.size - state.offset, max(chunk_bytes(tfrecord.cycle_bytes(state.hint)), state.needed))
            with storage.open_read(state.path, storage.STREAM_BLOCK) as f:
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
                    self._reserve_traces(len(result.starts), result.next_offset - state.offset, self._traces_left())
                self._ingest(code, state, result)
                self.publish()
            progressed = result.next_offset > state.offset
            state.offset, state.resyncing, state.needed = result.next_offset, result.resyncing, result.needed
            if not progressed or (state.needed and state.offset + state.needed > state.size):
                break

    @staticmethod
    def _big_trace_ahead(state: FileState) -> bool:
        """Whether the next record is a trace big enough to stream (its length is known from the last scan)."""
        return state.suffix == "graph_execution_traces" and not state.resyncing and state.needed >= big_record.THRESHOLD

    def _stream_big(self, code: int, state: FileState) -> str:
        """Indexes the big trace record at state.offset without reading it whole (reader/big_record.py): the same
        row, location and non-finite row as the chunk path, or the same damage. Returns big_record's status;
        FALLBACK leaves the record to the chunk path."""
        streamed = big_record.read_trace(state.path, state.offset)
        if streamed.status == big_record.OK:
            kind = np.array([self.kinds.code(streamed.kind)], np.int32)
            self._append_traces(
                kind,
                np.array([streamed.wall_time], np.float64),
                np.array([(streamed.offset + 12) | (code << LOC_SHIFT)], np.int64),
                np.array([0] if streamed.nonfinite else [], np.int64),
            )
            # a big record holds no health vector (FULL_TENSOR): nothing to compare; any other mode is read back
            plain = streamed.kind[3] not in step_values.MODES
            self._fold_steps(kind, step_values.unknown(1) if plain else None)
            self.publish()
        elif streamed.status == big_record.DAMAGED:
            self.damages.setdefault((code, streamed.offset), "data CRC mismatch")
        if streamed.status in (big_record.OK, big_record.DAMAGED):
            # the next record's length when it is big too (read with this one's footer): no chunk read to learn it
            state.offset, state.needed = streamed.end, streamed.next_needed
            # as the chunk path's scan of the record leaves it (a damaged record: no hint)
            state.hint = np.array([streamed.length], np.int64) if streamed.status == big_record.OK else None
        return streamed.status

    def _traces_left(self) -> int:
        """Bytes of every traces file not read yet (as last stat'ed)."""
        return sum(
            max(0, s.size - s.offset) for s in self.files if s.suffix == "graph_execution_traces" and not s.missing
        )

    def _reserve_traces(self, records: int, nbytes: int, remaining: int) -> None:
        """Sizes the trace columns for every traces file left (a multi-host run's too: sized per file, each next
        host's file copied them, old and new held at once) from this chunk's record density (a dump's trace
        records are nearly the same size), so ingesting never copies them to grow. Reserved rows cost no resident
        memory until written (Columns.reserve); too low an estimate just falls back to growing."""
        if nbytes <= 0 or remaining <= nbytes:
            return
        expect = len(self.traces) + int(records * remaining / nbytes * 1.02) + 1024
        if expect > self.traces.capacity():
            self.traces.reserve(expect)
            self.trace_nf.reserve(expect)  # at most one row per trace

    def _append_traces(
        self, kind: np.ndarray, wall_time: np.ndarray, loc: np.ndarray, nonfinite_rows: np.ndarray
    ) -> None:
        """Appends trace rows; `nonfinite_rows`: those holding NaN/inf, counted from the first appended row."""
        first_row = len(self.traces)
        # rows first, then the side table that points at them: a concurrent reader never sees a dangling row
        self.traces.append({"kind": kind, "wall_time": wall_time, "loc": loc})
        if len(nonfinite_rows):
            self.trace_nf.append({"row": nonfinite_rows + first_row})

    def _fold_steps(self, kind: np.ndarray, values: step_values.StepValues | None) -> None:
        """The appended rows' step values into the per-kind reductions; None (rows whose values were not had while
        indexing) leaves the reductions to the rules' read-back from then on."""
        if self._steps is not None and values is None:
            self._steps = None
        elif self._steps is not None and values is not None:
            self._steps.add(kind, [values.sig, values.dtype], values.zero)

    def _ingest(self, code: int, state: FileState, result: tfrecord.Scan) -> None:
        buf, base = result.buf, result.base
        if state.suffix == "graph_execution_traces":
            batch = trace_fast.decode_traces(buf, result.starts, result.lengths, self.kinds, result.words, state.carry)
            for start in batch.unparsed:
                self.damages.setdefault((code, base + start - 12), "record does not decode as a trace")
            self._append_traces(
                batch.kind, batch.wall_time, (batch.offset + base) | (code << LOC_SHIFT), batch.nonfinite_rows
            )
            self._fold_steps(batch.kind, batch.steps)
            return
        data = buf.tobytes() if state.suffix != "source_files" else None
        pending: _Pending = {}
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

    def _ingest_event(self, code: int, state: FileState, event: Any, what: str, offset: int) -> None:
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

    def _ingest_op(self, op: Any, host: str) -> None:  # op: a GraphOpCreation (protobuf: untyped)
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

    def _stack(self, frame_ids: Iterable[str]) -> tuple[str, ...]:
        stack = tuple(frame_ids)
        return self._stacks.setdefault(stack, stack)

    def _intern(self, table: list[str], codes: dict[str, int], value: str) -> int:
        code = codes.get(value)
        if code is None:
            code = codes[value] = len(table)
            table.append(value)
        return code

    def _ingest_execution(self, code: int, event: Any, offset: int, pending: _Pending) -> None:
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

    def _flush_executions(self, pending: _Pending) -> None:
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

    def _warm_quietly(self) -> None:
        """Builds the whole-run values before `done` is published (RunIndex's: the alert list and the layers
        above's); nothing to build for the ingestion alone."""

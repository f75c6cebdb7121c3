"""A tfdbg2 file set written without TensorFlow: the six files, TFRecord framing with masked CRC-32C.

Order follows TensorFlow's writer contract (its DebugDataReader relies on it): a source file is written before the
first stack frame that points to it, a graph before its ops, and an op before any trace of it. With
`circular_buffer_size > 0` executions and traces are kept in memory (the last N of each) and reach disk at
`flush()`/`close()`, as TensorFlow does; otherwise every record streams to disk and `flush()` after each step bounds
what a killed program loses to the records of that step (the reader stops at a cut record).
"""

from __future__ import annotations

import collections
import io
import os
import socket
import struct
import threading
import time
import uuid
from collections.abc import Sequence
from typing import Any

from ..reader import crc32c, schema
from .background import Background

SUFFIXES = ("metadata", "source_files", "stack_frames", "graphs", "execution", "graph_execution_traces")
FILE_VERSION = "debug.Event:1"
MAX_SOURCE_BYTES = 8 << 20  # a larger "source" file is recorded with no lines (not plain Python source)
Frame = tuple[str, int, str]  # (file path, line, function)


def _crc(data: bytes) -> int:
    """CRC-32C of one record's bytes: native when google-crc32c is there, else the table loop for short records
    (most are: one vectorized call costs more than a hundred bytes looped)."""
    if crc32c.NATIVE is not None:
        return crc32c.NATIVE[0](data)
    return crc32c.crc32c_python(data) if len(data) < 512 else crc32c.crc32c(data)


def frame(payload: bytes) -> bytes:
    """One TFRecord: length, masked CRC of the length, payload, masked CRC of the payload."""
    head = struct.pack("<Q", len(payload))
    return b"".join(
        (head, struct.pack("<I", crc32c.mask(_crc(head))), payload, struct.pack("<I", crc32c.mask(_crc(payload))))
    )


_BUFFER = 1 << 18  # bytes per open file


class DumpWriteError(OSError):
    """The dump directory cannot be written: raised by the constructor, never later in training."""


def _open_set(dump_root: str, host: str) -> tuple[str, dict[str, io.BufferedWriter]]:
    try:
        os.makedirs(dump_root, exist_ok=True)
        prefix = os.path.join(dump_root, f"tfdbg_events.{int(time.time()):010d}.{host}")
        # a buffer above a call's traces (a conv step's are ~10 KB, over io's 8 KB default: a write call each); the
        # writer's thread flushes after the calls it took (background.py); kept open until close
        files: dict[str, Any] = {s: open(f"{prefix}.{s}", "ab", buffering=_BUFFER) for s in SUFFIXES}  # noqa: SIM115
        return prefix, files
    except OSError as err:
        raise DumpWriteError(f"cannot write a debug dump to {dump_root!r}: {err.strerror or err}") from err


def _source_lines(path: str) -> list[str]:
    try:
        if os.path.getsize(path) > MAX_SOURCE_BYTES:
            return []
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except (OSError, UnicodeDecodeError, ValueError):
        return []


class DebugEventsWriter:
    """One process's file set in `dump_root`. Thread-safe: a framework's callbacks may arrive on any thread."""

    def __init__(self, dump_root: str, framework_version: str, circular_buffer_size: int = -1) -> None:
        self.dump_root = dump_root
        self.host = socket.gethostname()
        self.run_id = str(uuid.uuid4())
        self._lock = threading.Lock()
        self.prefix, self._files = _open_set(dump_root, self.host)
        size = circular_buffer_size if circular_buffer_size > 0 else None
        self._buffered = size is not None
        self._held: dict[str, collections.deque[bytes]] = {
            s: collections.deque(maxlen=size) for s in ("execution", "graph_execution_traces")
        }
        self._file_index: dict[str, int] = {}
        self._frame_ids: dict[Frame, str] = {}
        self._devices: dict[str, int] = {}
        self._next_tensor_id = 1
        self._closed = False
        self._background: Background | None = None  # started by the first defer()
        meta = schema.DebugEvent(wall_time=time.time())
        meta.debug_metadata.tensorflow_version = framework_version
        meta.debug_metadata.file_version = FILE_VERSION
        meta.debug_metadata.tfdbg_run_id = self.run_id
        self._write("metadata", meta)
        self.flush()

    # --- records -----------------------------------------------------------------------------------------------

    def _write(self, suffix: str, event: Any) -> None:
        data = frame(event.SerializeToString())
        if self._buffered and suffix in self._held:
            self._held[suffix].append(data)
        elif not self._closed:
            self._files[suffix].write(data)

    def _event(self, wall_time: float | None = None) -> Any:
        return schema.DebugEvent(wall_time=time.time() if wall_time is None else wall_time)

    def tensor_ids(self, n: int) -> list[int]:
        """n fresh symbolic tensor ids (unique in the file set, as TensorFlow's are in a process)."""
        with self._lock:
            first = self._next_tensor_id
            self._next_tensor_id += n
        return list(range(first, first + n))

    def stack(self, frames: Sequence[Frame]) -> list[str]:
        """Stack frame ids for `frames` (outermost first), writing each new source file and frame once."""
        with self._lock:
            return [self._frame_id(f) for f in frames]

    def _frame_id(self, f: Frame) -> str:
        known = self._frame_ids.get(f)
        if known is not None:
            return known
        path, line, func = f
        if path not in self._file_index:
            event = self._event()
            event.source_file.file_path = path
            event.source_file.host_name = self.host
            event.source_file.lines.extend(_source_lines(path))
            self._write("source_files", event)
            self._file_index[path] = len(self._file_index)
        frame_id = str(uuid.uuid4())
        event = self._event()
        event.stack_frame_with_id.id = frame_id
        flc = event.stack_frame_with_id.file_line_col
        flc.file_index, flc.line, flc.func = self._file_index[path], int(line), func
        self._write("stack_frames", event)
        self._frame_ids[f] = frame_id
        return frame_id

    def device_id(self, device_name: str) -> int:
        with self._lock:
            if device_name not in self._devices:
                self._devices[device_name] = len(self._devices) + 1
                event = self._event()
                event.debugged_device.device_name = device_name
                event.debugged_device.device_id = self._devices[device_name]
                self._write("graphs", event)
            return self._devices[device_name]

    def graph(self, graph_id: str, graph_name: str, outer_context_id: str = "") -> None:
        event = self._event()
        g = event.debugged_graph
        g.graph_id, g.graph_name, g.outer_context_id = graph_id, graph_name, outer_context_id
        with self._lock:
            self._write("graphs", event)

    def op(
        self,
        graph_id: str,
        graph_name: str,
        op_type: str,
        op_name: str,
        input_names: Sequence[str],
        output_tensor_ids: Sequence[int],
        stack_frame_ids: Sequence[str],
    ) -> None:
        event = self._event()
        o = event.graph_op_creation
        o.op_type, o.op_name, o.graph_name, o.graph_id = op_type, op_name, graph_name, graph_id
        o.input_names.extend(input_names)
        o.num_outputs = len(output_tensor_ids)
        o.output_tensor_ids.extend(output_tensor_ids)
        o.code_location.host_name = self.host
        o.code_location.stack_frame_ids.extend(stack_frame_ids)
        with self._lock:
            self._write("graphs", event)

    def execution(
        self,
        op_type: str,
        mode: int,
        *,
        graph_id: str = "",
        input_tensor_ids: Sequence[int] = (),
        output_tensor_ids: Sequence[int] = (),
        tensor_protos: Sequence[bytes] = (),
        stack_frame_ids: Sequence[str] = (),
        output_tensor_device_ids: Sequence[int] = (),
        wall_time: float | None = None,  # when the op or call ran (a deferred write: not now)
    ) -> None:
        event = self._event(wall_time)
        e = event.execution
        e.op_type, e.num_outputs, e.graph_id, e.tensor_debug_mode = op_type, len(output_tensor_ids), graph_id, mode
        e.input_tensor_ids.extend(input_tensor_ids)
        e.output_tensor_ids.extend(output_tensor_ids)
        e.tensor_protos.extend(tensor_protos)
        e.code_location.host_name = self.host
        e.code_location.stack_frame_ids.extend(stack_frame_ids)
        e.output_tensor_device_ids.extend(output_tensor_device_ids)
        with self._lock:
            self._write("execution", event)

    def trace(
        self,
        context_id: str,
        op_name: str,
        output_slot: int,
        mode: int,
        proto: bytes,
        device: str,
        wall_time: float | None = None,
    ) -> None:
        event = self._event(wall_time)
        t = event.graph_execution_trace
        t.tfdbg_context_id, t.op_name, t.output_slot, t.tensor_debug_mode = context_id, op_name, output_slot, mode
        t.tensor_proto, t.device_name = proto, device
        with self._lock:
            self._write("graph_execution_traces", event)

    @property
    def buffered(self) -> bool:
        """Whether executions and traces are held in a circular buffer (one record per slot) until flush/close."""
        return self._buffered

    def traces_framed(self, records: list[bytes]) -> None:
        """Graph execution traces already framed (trace_batch.TraceBatch): one write for all of them."""
        self._framed("graph_execution_traces", records)

    def executions_framed(self, records: list[bytes]) -> None:
        """Executions already framed (execution_layout.ExecutionLayout's events): one write for all of them."""
        self._framed("execution", records)

    def _framed(self, suffix: str, records: list[bytes]) -> None:
        with self._lock:
            if self._buffered:
                self._held[suffix].extend(records)
            elif not self._closed:
                self._files[suffix].write(b"".join(records))

    def defer(self, task: Any) -> None:
        """Runs `task` (a call's writes) on the writer's own thread, after the tasks deferred before it."""
        with self._lock:
            if self._background is None:
                self._background = Background(after=self._flush_files)
        self._background.submit(task)

    # --- disk --------------------------------------------------------------------------------------------------

    def flush(self) -> None:
        """Deferred writes done, streamed records reach the files (the buffered ones only at close)."""
        if self._background is not None:
            self._background.drain()
        self._flush_files()

    def _flush_files(self) -> None:
        with self._lock:
            if not self._closed:
                for f in self._files.values():
                    f.flush()

    def close(self) -> None:
        if self._background is not None:
            self._background.drain()
        with self._lock:
            if self._closed:
                return
            for suffix, held in self._held.items():
                self._files[suffix].write(b"".join(held))
                held.clear()
            for f in self._files.values():
                f.close()
            self._closed = True

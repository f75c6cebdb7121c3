"""Source file and stack frame queries."""

from __future__ import annotations

from collections.abc import Sequence

from ..wire import types as wire
from . import frames as frame_rules
from . import record_reads
from .errors import NotFound
from .state import RunState


class SourceQueries:
    def __init__(self, run: RunState):
        self.run = run

    def files(self) -> wire.SourceFilesResponseBody:
        """wire.ts SourceFilesResponse minus `run`."""
        return {
            "files": [
                {
                    "index": i,
                    "host": s.host,
                    "path": s.path,
                    "line_count": s.line_count,
                    "is_user": frame_rules.is_user_path(s.path),
                }
                for i, s in enumerate(list(self.run.sources))
            ]
        }

    def _op_lines(self, index: int) -> list[int]:
        run = self.run

        def build() -> list[int]:
            return sorted({line for (fi, line, _f, _h) in list(run.frames.values()) if fi == index})

        return run.derived.get(f"op_lines:{index}", len(run.frames), build)

    def file(
        self, index: int, begin_line: int | None = None, end_line: int | None = None
    ) -> wire.SourceFileResponseBody:
        """wire.ts SourceFileResponse minus `run` (lines 1-based, inclusive; clamped to the file)."""
        run = self.run
        if not 0 <= index < len(run.sources):
            raise NotFound(f"source file {index} not found (run has {len(run.sources)})")
        entry = run.sources[index]
        lines = run.source_lines(index)
        count = len(lines)
        b = max(1, begin_line or 1)
        e = min(count, end_line if end_line is not None else count)
        if count == 0:
            b, e = 1, 0
        b = min(b, max(e, 1))
        # lines are str and op lines int: the JSON encoder need not look inside (a source file is ~10,000 lines)
        return {
            "index": index,
            "host": entry.host,
            "path": entry.path,
            "line_count": count,
            "begin_line": b,
            "end_line": e,
            "lines": record_reads.FiniteList(lines[b - 1 : e] if e >= b else []),
            "op_lines": record_reads.FiniteList(self._op_lines(index)),
        }

    def frame(self, frame_id: str) -> wire.StackFrame:
        """wire.ts StackFrame."""
        run = self.run
        fr = run.frames.get(frame_id)
        if fr is None:
            raise NotFound(f"stack frame {frame_id!r} not found")
        file_index, line, func, host = fr
        src = run.sources[file_index] if 0 <= file_index < len(run.sources) else None
        path = src.path if src else None
        return {
            "id": frame_id,
            "host": src.host if src else host,
            "path": path,
            "line": line,
            "function": func,
            "source_index": file_index,
            "is_user": frame_rules.is_user_path(path) if path else False,
        }

    def frames(self, ids: Sequence[str]) -> wire.StackFramesResponseBody:
        """wire.ts StackFramesResponse minus `run`, frames in request order."""
        return {"frames": [self.frame(i) for i in ids]}

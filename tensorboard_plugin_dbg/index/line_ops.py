"""Which graph ops each source line created: (file, line) -> ops, built from the ops' creation stacks.

An op is listed at a line of file F when that line is the innermost frame of the op's creation stack that lies in F:
in model.py the `tf.math.log(...)` line lists Log; in train.py the `loss = step(x)` line lists every op made through
that call. `direct`: the line is also the op's innermost user frame (frames.is_user_path, the rule the Stack Trace
panel uses to pick the line it shows) — the line that wrote the op, not one that called into code that did.

Built once per (ops, frames, source files) count: trace batches do not change it, so a live run does not rebuild it on
every batch. Ops made on one line of one trace share a creation stack (one tuple of frame ids), so each distinct
stack is walked once; the per-op expansion is numpy. Cost: distinct stacks x their depth + ops x files per stack.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from . import frames as frame_rules
from .errors import NotFound
from .state import RunState

_EMPTY = np.zeros(0, np.int32)


@dataclasses.dataclass(frozen=True)
class FileLineOps:
    """One file's entries, sorted by line, then by the op's creation order: `lines[i]` created op `ops[i]` (an
    ordinal into `op_keys`), directly when `direct[i]`."""

    lines: np.ndarray  # int32, ascending
    ops: np.ndarray  # int32 ordinals, ascending within a line
    direct: np.ndarray  # bool
    op_keys: list[tuple[str, str]]  # (graph_id, op_name) by ordinal, the run's creation order (shared by all files)

    def line_span(self, line: int) -> tuple[int, int]:
        """[lo, hi): the entries of `line`."""
        return int(np.searchsorted(self.lines, line, "left")), int(np.searchsorted(self.lines, line, "right"))


@dataclasses.dataclass(frozen=True)
class LineOpMap:
    op_keys: list[tuple[str, str]]
    files: dict[int, FileLineOps]
    stacks: int  # distinct creation stacks walked (for the benchmark's report)

    def file(self, index: int) -> FileLineOps:
        got = self.files.get(index)
        if got is None:
            return FileLineOps(_EMPTY, _EMPTY, np.zeros(0, bool), self.op_keys)
        return got


def _stack_entries(
    stack: Sequence[str], frames: dict[str, tuple[int, int, str, str]], user_files: list[bool], only: int | None
) -> list[tuple[int, int, bool]]:
    """(file index, line, direct) of the innermost frame in each user file (`only`: in that one file) of one
    creation stack (outermost first)."""
    out: list[tuple[int, int, bool]] = []
    seen: set[int] = set()
    user_found = False
    for frame_id in reversed(stack):
        frame = frames.get(frame_id)
        if frame is None:  # its record not read yet: the map is rebuilt when the frame count grows
            continue
        file_index, line = int(frame[0]), int(frame[1])
        is_user = 0 <= file_index < len(user_files) and user_files[file_index]
        wanted = is_user if only is None else file_index == only
        if wanted and file_index not in seen:
            seen.add(file_index)
            out.append((file_index, line, is_user and not user_found))
        user_found = user_found or is_user
    return out


def build(run: RunState, only: int | None = None) -> LineOpMap:
    """The map of every user file, or (`only`) of that one file (a library file, built when it is shown: an op's
    stack passes through ~15 library files, so mapping them all would cost ~15 entries per op for files rarely
    opened; bench/source_lines.py)."""
    frames = dict(run.frames)
    user_files = [frame_rules.is_user_path(s.path) for s in list(run.sources)]
    op_items = list(run.ops.items())
    op_keys = [key for key, _ in op_items]
    stack_ids: dict[Sequence[str], int] = {}
    flat_file: list[int] = []
    flat_line: list[int] = []
    flat_direct: list[bool] = []
    starts: list[int] = []
    op_stack = np.empty(len(op_items), np.int64)
    for ordinal, (_key, op) in enumerate(op_items):
        stack = tuple(op.stack_frame_ids)
        sid = stack_ids.get(stack)
        if sid is None:
            sid = stack_ids[stack] = len(starts)
            starts.append(len(flat_file))
            for file_index, line, direct in _stack_entries(stack, frames, user_files, only):
                flat_file.append(file_index)
                flat_line.append(line)
                flat_direct.append(direct)
        op_stack[ordinal] = sid
    starts.append(len(flat_file))
    bounds = np.array(starts, np.int64)
    per_stack = np.diff(bounds)
    # Every op repeats its stack's entries: entry e of op o is flat[bounds[stack(o)] + e].
    counts = per_stack[op_stack] if len(op_stack) else np.zeros(0, np.int64)
    ops = np.repeat(np.arange(len(op_items), dtype=np.int64), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    entry = np.repeat(bounds[:-1][op_stack] if len(op_stack) else np.zeros(0, np.int64), counts)
    entry += np.arange(len(ops), dtype=np.int64) - first
    files = np.array(flat_file, np.int64)[entry]
    lines = np.array(flat_line, np.int64)[entry]
    made_here = np.array(flat_direct, bool)[entry]
    order = np.lexsort((ops, lines, files))
    files, lines, ops, made_here = files[order], lines[order], ops[order], made_here[order]
    by_file: dict[int, FileLineOps] = {}
    cuts = np.flatnonzero(np.diff(files)) + 1
    for lo, hi in zip(np.concatenate(([0], cuts)).tolist(), np.concatenate((cuts, [len(files)])).tolist()):
        if hi > lo:
            by_file[int(files[lo])] = FileLineOps(
                lines[lo:hi].astype(np.int32), ops[lo:hi].astype(np.int32), made_here[lo:hi], op_keys
            )
    return LineOpMap(op_keys, by_file, len(starts) - 1)


def file_line_ops(run: RunState, index: int) -> FileLineOps:
    """Source file `index`'s entries, from the map of the user files or that library file's own, each cached in
    the run's derived-value cache for the current (ops, frames, sources) count. NotFound for an unknown file."""
    if not 0 <= index < len(run.sources):
        raise NotFound(f"source file {index} not found (run has {len(run.sources)})")
    key = (len(run.ops), len(run.frames), len(run.sources))
    if frame_rules.is_user_path(run.sources[index].path):
        return run.derived.get("line_ops", key, lambda: build(run)).file(index)
    return run.derived.get(f"line_ops:{index}", key, lambda: build(run, index)).file(index)

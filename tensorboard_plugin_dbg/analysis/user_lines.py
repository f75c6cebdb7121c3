"""The user's line of an op: the innermost frame of its creation stack in user code, and the text of that line
(producer.py re-exports it; data_batch.py and the rules use it too)."""

from __future__ import annotations

from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

__all__ = ["user_frame"]


def user_frame(run: RunQueries, frame_ids: list[str]) -> tuple[wire.StackFrame | None, str | None]:
    """The innermost frame in user code (frames come outermost first) and the text of its line."""
    if not frame_ids:
        return None, None
    try:
        frames = run.stack_frames(frame_ids)["frames"]
    except LookupError:
        return None, None
    for frame in reversed(frames):
        if frame.get("is_user"):  # index/frames.py: the one rule of what is user code
            return frame, _line_text(run, frame)
    return None, None


def _line_text(run: RunQueries, frame: wire.StackFrame) -> str | None:
    if frame.get("path") is None or frame.get("source_index", -1) < 0:
        return None
    try:
        lines = run.source_file(int(frame["source_index"]), int(frame["line"]), int(frame["line"]))["lines"]
    except LookupError:
        return None
    return lines[0] if lines else None

"""Which loss an anonymous loss op is (#38 item 5). Keras 3 builds the loss given to `model.compile(loss=...)` under
the name scope `compile_loss/<loss>/` inside `fit`'s step, so its ops' creation stacks end at the `model.fit` line:
"op compile_loss/mse/Square" names neither the loss nor where it was chosen. The sentence names both: the loss
(`mse`) and the user's `compile(` call that gave it, found in the user's source file (kept in the dump) as the
last `.compile(` line before the op's user line; that is the line where the loss, the optimizer and its learning
rate are chosen."""

from __future__ import annotations

import os
import re

from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

_SCOPE = "compile_loss/"
_COMPILE = re.compile(r"\.compile\(")
_LOOK_BACK = 400  # lines above the user line searched for the compile call


def which_loss(run: RunQueries, op_name: str | None, frame: wire.StackFrame | None) -> str | None:
    """E.g. "the loss: `mse`, given to compile at train.py:16 — model.compile(optimizer=..., loss="mse")"; None
    for an op outside Keras's compiled loss."""
    if not op_name or _SCOPE not in op_name:
        return None
    rest = op_name.split(_SCOPE, 1)[1].split("/")
    loss = rest[0] if len(rest) > 1 else "the compiled loss"
    text = f"the loss: `{loss}`, given to compile()"
    line = _compile_line(run, frame)
    if line is None:
        return text
    number, source = line
    assert frame is not None  # _compile_line found a line in its file
    return f"{text} at {os.path.basename(str(frame.get('path')))}:{number} — {source.strip()}"


def _compile_line(run: RunQueries, frame: wire.StackFrame | None) -> tuple[int, str] | None:
    """The last `.compile(` line at or above the frame's line in its file, or None."""
    if frame is None or frame.get("source_index", -1) < 0 or frame.get("line") is None:
        return None
    end = int(frame["line"])
    begin = max(end - _LOOK_BACK, 1)
    try:
        lines = run.source_file(int(frame["source_index"]), begin, end)["lines"]
    except LookupError:
        return None
    for offset in range(len(lines) - 1, -1, -1):
        text = lines[offset]
        if _COMPILE.search(text) and not text.lstrip().startswith("#"):
            return begin + offset, text
    return None

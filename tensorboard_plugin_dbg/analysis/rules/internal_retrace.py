"""Retracing of a function the user did not write (#38 item 4): Keras's step, a TensorFlow library function. Its
traces matter when the user's program calls it trace after trace — each trace's first call is an eager execution
whose stack ends in the user's code — and the finding then names that call, the line the user can change. A
function traced only from inside other functions (tf.distribute's `_next_func`, once per device and epoch by
design) has no such call: the framework decides its traces, and nothing is said about it.
"""

from __future__ import annotations

import os

from tensorboard_plugin_dbg.analysis.user_lines import user_frame
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

_KERAS_REMAKE = (
    " Keras makes this step function anew on every compile() and for every new model, so a compile() or a new model "
    "before each call traces it again: compile once, before the loop (set a changing learning rate with "
    "model.optimizer.learning_rate.assign(...) or a LearningRateSchedule)."
)


def user_call(
    run: RunQueries, name: str, own: wire.StackFrame, first_calls: list[int]
) -> tuple[int, wire.StackFrame, str | None, str] | None:
    """For library function `name` (its own frame `own`) whose traces' first calls are `first_calls`: the execution
    to point at (the second trace's first call), the user's frame and line text there, and the sentence that says
    so; None when a trace's first call has no frame in user code (the framework called it, not the user)."""
    sites = []
    for index in first_calls:
        frame, text = user_frame(run, list(run.execution(index, max_elements=0)["stack_frame_ids"]))
        if frame is None:
            return None
        sites.append((index, frame, text))
    index, frame, text = sites[min(1, len(sites) - 1)]
    where = f"{frame.get('path')}:{int(frame['line'])}"
    same = all((f.get("path"), f["line"]) == (frame.get("path"), frame["line"]) for _i, f, _t in sites)
    made = "each trace made by" if same else "the second trace made by"
    library = _library_path(str(own.get("path") or ""))
    said = f"{name} (not your code: {library}) was traced {len(sites)} times, {made} your call at {where}."
    return index, frame, text, said


def remake_hint(own: wire.StackFrame, nothing_differed: bool) -> str:
    """Keras's step functions are remade by compile(): said where the traces themselves differ in nothing shown."""
    path = str(own.get("path") or "")
    return _KERAS_REMAKE if nothing_differed and f"{os.sep}keras{os.sep}" in path else ""


def _library_path(path: str) -> str:
    """The function's file as its package names it (`keras/src/.../trainer.py`), else its file name."""
    marker = f"site-packages{os.sep}"
    return path.split(marker, 1)[1] if marker in path else (os.path.basename(path) or "a library")

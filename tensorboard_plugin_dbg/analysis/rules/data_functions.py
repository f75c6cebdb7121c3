"""Functions tf.data traces itself (#39): a MultiDeviceIterator (MirroredStrategy's input) traces its `_init_func`,
`_next_func`, `_finalize_func` and their `_remote_` twins once per device and epoch; a map's wrapper traces the map
function once per `.map()` call. Their traces are tf.data's doing, not a retrace the user can act on.

Told from the dump's own facts, not from a list of names (tf.data's names change between releases, and a user may
name a function `_init_func` too): each op's creation stack holds the frame that asked TensorFlow to trace the
function it lies in — the caller of TensorFlow's tracing machinery (`tf.function`'s `__call__` or
`get_concrete_function`). When that frame is in tf.data's package, tf.data traced the function. A function whose
body merely uses tf.data (a Keras step calling `get_next`) is traced by its own caller, so it is not one of these.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

# tf.function's own files (its __call__ / get_concrete_function, the trace, and the wrapper that runs the body):
# the innermost of their frames in a stack is the trace of the function the op lies in
_TRACING = f"{os.sep}eager{os.sep}polymorphic_function{os.sep}"
# what lies between that frame and the one that asked for the trace: tf.function's files, the graph builder it
# calls (its captures too), and the decorators around the call (traceback filtering, dispatch)
_BETWEEN = (
    _TRACING,
    f"{os.sep}framework{os.sep}func_graph.py",
    f"tensorflow{os.sep}core{os.sep}function{os.sep}",
    f"tensorflow{os.sep}python{os.sep}util{os.sep}",
)
_TF_DATA = f"tensorflow{os.sep}python{os.sep}data{os.sep}"
_OPS_LOOKED_AT = 8  # ops whose creation stacks are read: the first that shows the tracing caller decides


def traced_by_tf_data(run: RunQueries, graph_id: str) -> bool:
    """Whether tf.data's own code traced the function of graph `graph_id` (the module docstring says how)."""
    for frames in op_stacks(run, graph_id, _OPS_LOOKED_AT):
        caller = tracing_caller(frames)
        if caller is not None:
            return _TF_DATA in str(caller.get("path") or "")
    return False


def op_stacks(run: RunQueries, graph_id: str, ops: int) -> Iterator[list[wire.StackFrame]]:
    """The creation stacks (outermost frame first) of the graph's first `ops` ops that have one."""
    for op_name in run.graph_op_names(graph_id)[:ops]:
        entry = run.op_entry(graph_id, op_name)
        if entry is None or not entry.stack_frame_ids:
            continue
        try:
            yield run.stack_frames(list(entry.stack_frame_ids))["frames"]
        except LookupError:
            continue


def tracing_caller(frames: list[wire.StackFrame]) -> wire.StackFrame | None:
    """In a creation stack (outermost first), the frame that asked TensorFlow to trace the function the op was made
    in: outward from the innermost frame of tf.function's files, the first frame that is none of _BETWEEN (None
    when the op was not made while tracing a function, or the stack does not show it)."""
    paths = [str(f.get("path") or "") for f in frames]
    inner = [i for i, p in enumerate(paths) if _TRACING in p]
    if not inner:
        return None
    i = inner[-1]
    while i >= 0 and any(part in paths[i] for part in _BETWEEN):
        i -= 1
    return frames[i] if i >= 0 else None

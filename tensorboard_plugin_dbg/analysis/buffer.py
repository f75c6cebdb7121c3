"""Did a circular buffer drop records before the ones kept?

With `circular_buffer_size=N > 0` (TensorFlow's default, N = 1000) the executions and the graph execution traces
are kept in two in-memory rings of N and written at exit: only the last N of each survive, and nothing on disk says
how many were dropped. The root cause can then only name the first non-finite tensor *kept*. The evidence that
records were dropped, read from what was kept:

- a tf.function call whose record was kept but whose traces were not (its window — after the previous execution,
  up to its own record — holds no trace) while a later call of the same function has traces: the trace ring
  overflowed first;
- a trace whose input was traced later in the run but never before it (its earlier records are gone): the caller
  checks that one per producer (classify.py's "unknown" role).
"""

from __future__ import annotations

import numpy as np

from tensorboard_plugin_dbg.analysis.columns import RunColumns


def dropped_calls(cols: RunColumns) -> int:
    """How many kept tf.function calls lost their traces (0: no sign that the trace ring dropped any)."""
    calls = np.flatnonzero(cols.exec_is_function)
    if not len(calls) or not len(cols.trace_wall) or len(cols.exec_op_type) != len(cols.exec_wall):
        return 0
    walls = cols.trace_wall
    if not bool(np.all(walls[1:] >= walls[:-1])):
        walls = np.sort(walls)  # several hosts: wall times interleave
    lo = np.where(calls > 0, cols.exec_wall[np.maximum(calls - 1, 0)], -np.inf)
    counts = np.searchsorted(walls, cols.exec_wall[calls], "right") - np.searchsorted(walls, lo, "right")
    types = cols.exec_op_type[calls]
    dropped = 0
    for code in np.unique(types).tolist():
        mine = counts[types == code]
        traced = np.flatnonzero(mine > 0)
        if len(traced):  # calls of this function before its first traced one lost theirs
            dropped += int(np.count_nonzero(mine[: traced[0]] == 0))
    return dropped

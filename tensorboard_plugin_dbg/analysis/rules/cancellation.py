"""A gradient small by construction is not vanishing (#38 item 8).

Some gradients are zero in exact arithmetic: the gradient through a row mean before a softmax or a normalisation
(`gradient_tape/sub/Sum` of `z - mean(z)`) sums a row of terms that cancel (a softmax's gradient sums to 0 over a
row). What is left is float rounding, ~1e-8 of the terms' size — below the value_vanishing floor, but not a
gradient that vanished on its way back from the loss. Such an op adds or reduces terms that are not small
themselves: its output is tiny beside its own inputs. A gradient that truly vanishes is small in its inputs too
(the loss scaled by 1e-9, a saturated activation): that one is still found.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tensorboard_plugin_dbg.index.protocol import RunQueries

# Ops whose output can cancel to ~0 from inputs that are not small: sums and differences.
SUMMING_OPS = frozenset({"Sum", "Mean", "AddN", "AddV2", "Add", "Sub", "BiasAddGrad"})
# Output max |x| below this fraction of its largest input's: rounding of a sum whose exact value is 0
# (float32 rounding leaves ~1e-7 of the terms; 1e-4 keeps any real, merely small, gradient).
CANCELLED = 1e-4


def cancels(
    run: RunQueries,
    graph_id: str,
    op_name: str,
    row: int,
    magnitude: float,
    max_abs: Callable[[RunQueries, int], float],
    floor: float,
    depth: int = 8,
) -> bool:
    """True when trace `row` of op `op_name` (max |x| = `magnitude`) is small because a sum cancelled: followed back
    through its inputs that are small too (below `floor`: a Reshape, Tile or division of the cancelled sum) to
    where the smallness began; that op sums or reduces inputs over 1/CANCELLED times larger than its output."""
    entry = run.op_entry(graph_id, op_name)
    if entry is None or depth <= 0:
        return False
    largest, small = 0.0, []
    for name, slot in entry.inputs:
        rows = np.asarray(run.op_trace_rows(graph_id, name, slot), np.int64)
        rows = rows[rows < row]
        if not len(rows):
            continue
        m = max_abs(run, int(rows[-1]))
        if not np.isfinite(m):
            continue
        largest = max(largest, m)
        if 0 < m < floor:
            small.append((name, int(rows[-1]), m))
    if small:  # the smallness came in with an input: cancelled there, or a gradient that truly vanished
        return all(cancels(run, graph_id, n, r, m, max_abs, floor, depth - 1) for n, r, m in small)
    return entry.op_type in SUMMING_OPS and magnitude < CANCELLED * largest

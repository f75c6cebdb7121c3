"""Which replica's shard a tf.distribute step handed a function (links.py follows a function input to it).

Under MirroredStrategy, Keras 3's `multi_step_on_iterator` has one iterator op per replica, in replica order
(`IteratorGetNext` on replica 0's device, `IteratorGetNext_1` on replica 1's, ...); tf.distribute splits each
global batch into N shards of consecutive rows in replica order (even when it divides, as `fit`'s batch_size does),
so replica r's shard is rows r*b .. (r+1)*b - 1 of a global batch of N*b rows. The dump records each shard's size
(every mode but CURT_HEALTH) and, with FULL_TENSOR, its shape: the rows are named only when the shape says b and
every replica's shard of that step has the same size.

On a replay of a MirroredStrategy capsule, each replica's shard is an eager slice of the captured batch (the rows
the manifest gives it): `capsule_shard` tells which batch array and which replica's rows a tensor passed in holds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from tensorboard_plugin_dbg.analysis.columns import RunColumns
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.reader import capsule_arrays, capsule_files
from tensorboard_plugin_dbg.reader.capsule_manifest import Manifest

_SAME = 1e-6  # relative: a float32 peak read back from the dump and from the capsule's array


def nearest(run: RunQueries, cols: RunColumns, graph_id: str, name: str, slot: int, trace_row: int) -> int | None:
    """The trace of `name`:`slot` nearest in time to `trace_row` (the same step's), or None without one."""
    rows = np.asarray(run.op_trace_rows(graph_id, name, slot), np.int64)
    rows = rows[rows < len(cols.trace_wall)]
    if not len(rows):
        return None
    return int(rows[np.argmin(np.abs(cols.trace_wall[rows] - cols.trace_wall[trace_row]))])


def shard_words(
    run: RunQueries, cols: RunColumns, graph_id: str, names: Sequence[str], replica: int, slot: int, row: int
) -> str:
    """E.g. " to replica 1 of 2 (on CPU:1), batch 1: its shard, rows 4-7 of the global batch's 8": the replica, its
    device, which global batch (the iterator op's run, counted from 0), and the rows when the dump tells."""
    n = len(names)
    mine = np.asarray(run.op_trace_rows(graph_id, names[replica], slot), np.int64)
    step = int(np.count_nonzero(mine < row))
    trace = run.graph_execution(row, max_elements=0)
    device = str(trace.get("device_name") or "").rsplit("/device:", 1)[-1]
    text = f" to replica {replica} of {n}" + (f" (on {device})" if device else "")
    text += f", batch {step}: its shard"
    sizes: list[object] = []
    for name in names:
        sibling = nearest(run, cols, graph_id, name, slot, row)
        health = run.graph_execution(sibling, max_elements=0)["health"] if sibling is not None else None
        sizes.append(health.get("size") if health is not None else None)
    shape = trace["health"].get("shape")
    if isinstance(shape, list) and shape and None not in sizes and len(set(sizes)) == 1:
        b = int(shape[0])
        return text + f", rows {replica * b}-{(replica + 1) * b - 1} of the global batch's {n * b}"
    return text + f", the {_ordinal(replica + 1)} of the {n} parts tf.distribute split the global batch into"


def _ordinal(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def capsule_shard(folder: str, manifest: Manifest, peak: float) -> tuple[str, np.ndarray, int, int, int] | None:
    """(batch array, its values, replica, first row, end row) of the one replica's rows of one batch array of the
    capsule whose largest finite |x| is `peak` (a shard passed into a replica's step: its max |x| from the dump);
    None when no rows or more than one array or replica match (then nothing is said)."""
    rows = (manifest.get("replicas") or {}).get("rows") or {}
    if not rows or not math.isfinite(peak) or peak <= 0:
        return None
    try:
        located = capsule_arrays.locate_group(folder, manifest, "batch")
    except capsule_files.CapsuleError:
        return None
    found = []
    for name, loc in located.items():
        values = capsule_arrays.read_whole(loc)
        if values.dtype.kind != "f" or not values.ndim:
            continue
        for replica, (begin, end) in sorted((int(k), v) for k, v in rows.items()):
            part = np.abs(values[begin:end].astype(np.float64))
            part = part[np.isfinite(part)]
            if part.size and abs(float(part.max()) - peak) <= _SAME * peak:
                found.append((name, values, replica, int(begin), int(end)))
    return found[0] if len(found) == 1 else None

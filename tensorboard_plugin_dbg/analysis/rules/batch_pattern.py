"""A shape change that is a dataset's rhythm, not a bug: the batch size alternates between a few values (training
batches of 64, an evaluation batch of 16 every N steps; a last partial batch each epoch). Such a tensor changes
shape twice per cycle, so a shape-change finding per change would be noise: tensor_rules.changes gives it one
`batch_alternates` finding that names the sizes and their rhythm instead.

Read only for a kind whose shape changed at least twice (the scan counted the changes, tensor_scan.py): its first
STEPS steps, one record read each, enough to see a rhythm of any practical period.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from tensorboard_plugin_dbg.analysis.rules.tensor_scan import FULL_HEALTH, SHAPE, KindStats
from tensorboard_plugin_dbg.index.protocol import RunQueries

STEPS = 2048  # steps of one kind read to find its rhythm
MAX_SIZES = 3  # train, eval and a last partial batch; more distinct sizes is a shape that really changes
DATA_FUNCTION = "Dataset_"  # a tf.data function's graph name: its traces are in its threads' order (one_short_batch)


@dataclasses.dataclass(frozen=True)
class Rhythm:
    sizes: list[int]  # distinct batch sizes (SHAPE: dim 0) or element counts (FULL_HEALTH), in order first seen
    first_cycle: list[tuple[int, int]]  # (size, consecutive steps) up to where the first size comes back
    cycles: int  # runs of the first size (how many times the rhythm repeats)
    steps: int  # steps read
    dims: bool  # True: batch sizes (SHAPE mode dims); False: element counts (FULL_HEALTH knows no dims)

    def text(self) -> str:
        """'batch size alternates: 64/16 (64 ×4 traces, then 16 ×1, 3 times in 15 traces)'."""
        what = "batch size" if self.dims else "output size (elements)"
        cycle = ", then ".join(
            f"{size} ×{n}" + (" traces" if i == 0 else "") for i, (size, n) in enumerate(self.first_cycle)
        )
        return (
            f"{what} alternates: {'/'.join(map(str, self.sizes))} ({cycle}, {self.cycles} times in {self.steps} traces)"
        )


Sizes = tuple[list[int], bool]  # a kind's first STEPS steps' batch sizes (or element counts), whether batch sizes


def rhythm(read: Sizes) -> Rhythm | None:
    """The kind's batch-size rhythm (from its `sizes`), or None where it has none (more than MAX_SIZES sizes, or
    one change and back never)."""
    return _rhythm(*read)


def one_short_batch(read: Sizes) -> bool:
    """Whether every step of the kind (its `sizes`) has one batch size but one smaller step, wherever it falls: a last
    partial batch of a tf.data function (DATA_FUNCTION), whose k-th trace is not its k-th element (a parallel map's
    threads write their traces in their own order, so the partial batch may come before the full one before it)."""
    return len(set(read[0])) == 2 and read[0].count(min(read[0])) == 1


def sizes(run: RunQueries, stats: KindStats, kind: int) -> Sizes | None:
    """(the batch sizes or element counts of the kind's first STEPS steps, whether they are batch sizes), or None
    where its shape changes otherwise (a dim other than the first, the rank, or an unknown shape): read once, for
    `rhythm` and `one_short_batch`."""
    begin = int(stats.starts[kind])
    end = min(int(stats.starts[kind + 1]), begin + STEPS)
    rows = np.sort(stats.order[begin:end].astype(np.int64))  # a kind's steps are its rows in row order
    modes, v = run.trace_vectors(rows)
    if (modes == SHAPE).all() and np.isfinite(v[:, 2]).all():
        rank = v[:, 2]
        # dims past the first must stay put: only the batch dimension may change
        if (
            len(np.unique(rank)) != 1
            or rank[0] < 1
            or (v[:, 5 : 4 + int(min(rank[0], 6))] != v[0, 5 : 4 + int(min(rank[0], 6))]).any()
        ):
            return None
        sizes, dims = v[:, 4], True
    elif (modes == FULL_HEALTH).all() and np.isfinite(v[:, 3]).all():
        if len(np.unique(v[:, 3])) != 1:
            return None
        sizes, dims = v[:, 4], False
    else:
        return None
    return [int(s) for s in sizes], dims


def _rhythm(sizes: list[int], dims: bool) -> Rhythm | None:
    seen = list(dict.fromkeys(sizes))
    if not 2 <= len(seen) <= MAX_SIZES:
        return None
    runs = [(size, len(list(group))) for size, group in itertools.groupby(sizes)]
    back = next((i for i, (size, _) in enumerate(runs) if i > 0 and size == runs[0][0]), len(runs))
    cycles = sum(1 for size, _ in runs if size == runs[0][0])
    if cycles < 2:  # one change and back never: a shape that changed, not a rhythm
        return None
    return Rhythm(seen, runs[:back], cycles, len(sizes), dims)

"""One pass over a run's health records, reduced per trace kind (graph, op, slot, mode, device) to what the tensor
rules need, whatever their thresholds: how often the output's shape and dtype changed from one step to the next
(and where first), and the longest run of consecutive all-zero steps (and where). A step of a kind is its k-th
trace (tfdbg2 records no step number: wave2-notes.md).

Cost: none left for a run the indexer read whole: it folds each appended chunk's values (reader/step_values.py)
into the same per-kind state as it goes (index/kind_steps.py, run.folded_steps), so the scan only places the
result (issue #40 item 2: reading every health vector back was ~0.45 s of CPU per 1 M traces, a third of the time
to all alerts). Otherwise (a fake run, a streamed big record of a health mode) the records are read back in blocks
of neighbouring rows (one file read per block, the vectors gathered by numpy: index/record_reads.trace_vectors);
each block's dtype, shape signature and all-zero flag per row are folded
into per-kind state at once (kind_steps.KindSteps), so the pass holds nothing of the run's size: its memory is a
block's, the same on a 20 k or a 10 M dump. It used to keep 10 bytes per row, then sort them by kind with int64
temporaries: ~80 bytes per trace at the peak, which was the TensorBoard process's peak once every alert was served
(bench/run.py's per-trace figure, issue #25). Python loops run per kind, never per trace. The result (a few arrays
per kind, and the index's own rows-by-kind permutation, not a copy) is cached per run version.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tensorboard_plugin_dbg.index.kind_steps import KindSteps
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.reader import step_values

# rows per block: ~1 MB of records and ~0.5 MB of vectors, the same on a 20 k or a 10 M dump. The block is the scan's
# only memory and it is there once indexing ends (the process's peak): at 16 K rows it was ~18 MiB, 54 B per trace of
# RSS over idle at 1 M (target 48); at 4 K, 43 B, for a scan 13 % slower (1 M: 0.49 -> 0.56 s, bench/rules.py)
BLOCK = 1 << 12
FULL_HEALTH, SHAPE, FULL_TENSOR = 4, 5, 7


@dataclasses.dataclass
class KindStats:
    """Per trace kind (arrays indexed by kind code)."""

    steps: np.ndarray  # int64: traces of the kind
    shape_changes: np.ndarray  # int64: steps whose shape signature differs from the step before
    first_shape_change: np.ndarray  # int64: sorted position (into order) of the first such step, -1 none
    dtype_changes: np.ndarray
    first_dtype_change: np.ndarray
    zero_run: np.ndarray  # int64: longest run of consecutive all-zero steps (FULL_HEALTH, size > 0)
    zero_run_end: np.ndarray  # int64: sorted position of that run's last step, -1 none
    order: np.ndarray  # the index's rows-by-kind permutation and segment starts (kind_rows), for positions -> rows
    starts: np.ndarray


def scan(run: RunQueries) -> KindStats:
    """The stats of the run's current version (cached in the run's derived-value cache).

    Built WITHOUT the run's derived-value lock, then stored (DerivedCache.put): it takes seconds at 10 M traces,
    and a build under the lock makes every other build of the run wait (the health map's first page waited 13 s
    for it at 10 M). One thread per version builds it (alert_list.start_scan); only a caller that waits on purpose
    (the report) may build it a second time."""
    version = run.version
    stats = run.derived.peek("rule_scan", version)
    if stats is None:
        stats = _scan(run)
        run.derived.put("rule_scan", version, stats)
    return stats


def _scan(run: RunQueries) -> KindStats:
    order, starts = run.kind_rows()  # the rows it covers are the rows scanned (kind_rows: one published length)
    n = int(starts[-1]) if len(starts) else 0
    folded = _folded(run, order, starts, n)
    if folded is not None:
        return folded
    kind = run.trace_arrays()["kind"]
    steps = KindSteps(starts, columns=2)
    for lo in range(0, n, BLOCK):
        rows = np.arange(lo, min(lo + BLOCK, n), dtype=np.int64)
        modes, v = run.trace_vectors(rows, summary=True)
        values = step_values.of_vectors(modes, v)
        steps.add(kind[lo : lo + len(rows)], [values.sig, values.dtype], values.zero)
    (shape_ch, dtype_ch), (first_shape, first_dtype) = steps.changes, steps.first_change
    # `order` is the index's own cached permutation (int32), not a copy: the rules map positions to rows with it
    return KindStats(
        steps.steps, shape_ch, first_shape, dtype_ch, first_dtype, steps.best_run, steps.best_run_end, order, starts
    )


def _folded(run: RunQueries, order: np.ndarray, starts: np.ndarray, n: int) -> KindStats | None:
    """The stats from the reductions the indexer folded as it appended the rows (run.folded_steps), when they cover
    exactly the rows of `starts` (the same count per kind); None otherwise (read back: _scan). Their positions are
    step numbers: each becomes starts[kind] + step."""
    got = run.folded_steps()
    n_kinds = len(starts) - 1
    if got is None or got[0] != n or len(got[1].steps) > max(n_kinds, 0):
        return None
    steps = got[1]
    base = np.asarray(starts[:-1], np.int64)

    def whole(a: np.ndarray, fill: int) -> np.ndarray:  # kinds with no row folded yet: as a scan leaves them
        return np.concatenate([a, np.full(n_kinds - len(a), fill, np.int64)])

    def placed(a: np.ndarray) -> np.ndarray:
        a = whole(a, -1)
        return np.where(a >= 0, base + a, -1)

    counts = whole(steps.steps, 0)
    if not np.array_equal(counts, np.diff(starts)):
        return None
    (shape_ch, dtype_ch), (first_shape, first_dtype) = steps.changes, steps.first_change
    return KindStats(
        counts,
        whole(shape_ch, 0),
        placed(first_shape),
        whole(dtype_ch, 0),
        placed(first_dtype),
        whole(steps.best_run, 0),
        placed(steps.best_run_end),
        order,
        starts,
    )

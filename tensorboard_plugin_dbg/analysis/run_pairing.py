"""The input trace a reader read when runs of its graph overlapped. tf.data runs a map function's calls in parallel,
so two runs' traces interleave in the file: both runs' readers can be written before either run's input, and
neither "the input's last trace before the reader" nor "its first trace after, before the reader's next" names the
run's own (classify._same_run_inputs). Each run computes the input once and the reader once, so when the two were
traced equally often the n-th reader read the n-th input (a circular buffer cuts a prefix of the file: both lose as
many, or the counts differ). Threads may also write one op's runs out of their order, so the pairing is trusted
only where it cannot matter: every input trace the reader could have been paired with, within the interleaving's
depth, has the same health flag. Otherwise the input stays unpaired (its health unknown), never guessed, and the
root cause names the traces it could have read (`candidates`): the order is ambiguous, nothing was dropped."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from tensorboard_plugin_dbg.analysis.columns import RunColumns
from tensorboard_plugin_dbg.analysis.trace_lookup import Lookup

# Each tensor code costs a scan of the trace column (~15 ms at 10 M traces): a bounded number per call, and
# overlapping-run pairs are rare (classify asks only for pairs no other rule settled).
_MAX_CODES = 16
_MAX_PAIRS = 256

Rows = npt.NDArray[np.int64]
# by_rank's answer where the reader and its input were traced equally often but the input's traces the reader could
# have read disagree in health: no trace of the input can be called this run's (not even an earlier run's, which
# an earlier reader read), so the caller leaves the input unrecorded
AMBIGUOUS = -2


def by_rank(cols: RunColumns, readers: Rows, own: Rows, inputs: Rows) -> Rows:
    """For each (reader's trace row, reader's tensor code, input tensor code): the input's trace of the reader's
    run, paired by rank, where that pairing is certain to give the input's health; AMBIGUOUS where the traces it
    could be disagree; -1 elsewhere (unequal counts: ranks say nothing)."""
    out = np.full(len(readers), -1, np.int64)
    rows_of: dict[int, Rows] = {}
    for i in range(min(len(readers), _MAX_PAIRS)):
        codes = (int(own[i]), int(inputs[i]))
        missing = [c for c in codes if c not in rows_of]
        if len(rows_of) + len(missing) > _MAX_CODES:
            break
        for code in missing:
            rows_of[code] = _rows_equal(cols.trace_tensor, code)
        out[i] = _paired(cols, rows_of[codes[0]], rows_of[codes[1]], int(readers[i]))
    return out


def previous_run_waits(lookup: Lookup, own: Rows, inputs: Rows, previous: Rows) -> npt.NDArray[np.bool_]:
    """For readers (tensor codes `own`) whose input's (`inputs`) first trace after them comes before their next
    trace, "the same run" by position: whether the reader's previous run (row `previous`, -1: none) had no trace of
    the input since its own previous run either. That run then waits for the same trace (two readers, then their
    inputs): position cannot say whose it is, ranks may (by_rank)."""
    out = np.asarray(previous) >= 0
    ask = np.flatnonzero(out)
    if len(ask):
        since = lookup.before(own[ask], previous[ask])
        fed = lookup.before(inputs[ask], previous[ask])
        out[ask] = (fed < 0) | (fed < since)
    return out


def candidates(cols: RunColumns, reader: int, own: int, input_code: int) -> Rows:
    """The input's trace rows that the reader's trace at row `reader` (tensor code `own`) could have read when runs
    overlapped: those within the interleaving's depth around its rank (by_rank's window), ascending; none when the
    two were not traced equally often."""
    reader_rows, input_rows = _rows_equal(cols.trace_tensor, own), _rows_equal(cols.trace_tensor, input_code)
    window = _window(reader_rows, input_rows, reader)
    return input_rows[window[0] : window[1]] if window is not None else np.zeros(0, np.int64)


def _paired(cols: RunColumns, reader_rows: Rows, input_rows: Rows, reader: int) -> int:
    window = _window(reader_rows, input_rows, reader)
    if window is None:
        return -1
    lo, hi, rank = window
    flags = np.asarray(cols.trace_nonfinite[input_rows[lo:hi]])
    return int(input_rows[rank]) if bool(np.all(flags == flags[rank - lo])) else AMBIGUOUS


def _window(reader_rows: Rows, input_rows: Rows, reader: int) -> tuple[int, int, int] | None:
    """(lo, hi, rank): the ranks [lo, hi) of the input traces the reader at row `reader` could have read, and its
    own rank; None when the counts differ or `reader` is not one of `reader_rows`."""
    if len(reader_rows) != len(input_rows):
        return None
    rank = int(np.searchsorted(reader_rows, reader))
    if rank >= len(reader_rows) or reader_rows[rank] != reader:
        return None
    paired = int(input_rows[rank])
    # how many other runs lie between the reader and its rank's input: other readers there (their inputs could be
    # this one's) or other inputs there (one of them could be this reader's), whichever is more
    at, at_input = int(np.searchsorted(reader_rows, paired)), int(np.searchsorted(input_rows, reader))
    depth = max(at - rank - 1, rank - at_input) if paired > reader else max(rank - at, at_input - rank - 1)
    return max(rank - depth, 0), min(rank + depth + 1, len(input_rows)), rank


def _rows_equal(column: Any, code: int) -> Rows:
    """The rows of a tensor-code column (an array, or the index's KindMapped) holding `code`, ascending."""
    if isinstance(column, np.ndarray):
        return np.flatnonzero(column == code)
    return np.asarray(column.rows_equal(code), np.int64)

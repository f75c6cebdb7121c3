"""Trace rows grouped by kind: the permutation behind op and filter queries and the analysis's input lookup.

`rows_by_kind(kind, n_kinds)` returns (order, starts): the rows of kind k, ascending, are
order[starts[k]:starts[k + 1]]. It is a counting sort done in blocks of rows, so the only memory of the size of
the run is `order` itself (int32: 4 bytes per trace). `np.argsort(kind, kind="stable")` gave the same answer but
returned int64 (8 bytes per trace) that then had to be narrowed: at 10 M traces its temporaries alone were ~12
bytes per trace above everything the index holds, most of the RSS budget of ~48 bytes per trace.
"""

from __future__ import annotations

import numpy as np

_BLOCK = 1 << 16  # rows per step: bounds the temporaries at a few MB whatever the run's size


def rows_by_kind(kind: np.ndarray, n_kinds: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, starts) for kind codes `kind` (0 <= code < n_kinds; anything else is left out of every group)."""
    n = len(kind)
    counts = np.zeros(n_kinds, np.int64)
    for lo in range(0, n, _BLOCK):
        block = kind[lo : lo + _BLOCK]
        valid = block[(block >= 0) & (block < n_kinds)]
        counts += np.bincount(valid, minlength=n_kinds)[:n_kinds]
    starts = np.zeros(n_kinds + 1, np.int64)
    np.cumsum(counts, out=starts[1:])
    order = np.empty(int(starts[-1]), np.int32 if n < 2**31 else np.int64)
    filled = starts[:-1].copy()  # next free slot of each kind
    # 16-bit keys when the codes fit (a dump has a few thousand kinds): numpy sorts them stably by radix, ~10x
    # faster than int64 keys, which matters when the first op request or the root cause builds this at 10 M rows
    key_type = np.uint16 if n_kinds <= 1 << 16 else np.int64
    for lo in range(0, n, _BLOCK):
        block = kind[lo : lo + _BLOCK]
        rows = np.flatnonzero((block >= 0) & (block < n_kinds))
        keys = block[rows].astype(key_type)
        by = np.argsort(keys, kind="stable")  # rows of one kind stay ascending
        keys, rows = keys[by], rows[by]
        # rank of each row among the rows of its kind in this block, then its slot after the earlier blocks'
        in_block = np.bincount(keys, minlength=n_kinds)[:n_kinds]
        first = (np.cumsum(in_block) - in_block)[keys]  # where the block's sorted rows of that kind begin
        slot = filled[keys] + (np.arange(len(keys)) - first)
        order[slot] = rows + lo
        filled += in_block
    return order, starts

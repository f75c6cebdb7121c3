"""A jitted call's counts derived on the host: the program returns only its raw reductions, one int32 vector.

On XLA:CPU every small operation after a count reduction is a kernel launch of its own (a few microseconds each,
whatever its size): deriving NaN as size - (< 0) - (> 0) - (== 0), taking padding off a zero count, scaling a
reshaped tensor's counts and rectifying a ReLU's made ~100 of them on a small conv net's step, more than the
reductions themselves cost. So the top-level program hands out the reductions as they come out (the writer's thread
turns them into each point's counts, in a few numpy steps laid out at trace time); loop bodies and branches keep
deriving their counts in the program (instrument.in_graph_counts), their payloads travel inside the raw vector as is.
The counts written are the same either way.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

# the raw reductions per tensor: CURT_HEALTH counts (finite, not NaN); the others (< 0, > 0, == 0, == -inf, == inf)
RAW_WIDTH = {"CURT_HEALTH": 2, "CONCISE_HEALTH": 5, "FULL_HEALTH": 5}


def derive(raw: np.ndarray, length: np.ndarray, pad: np.ndarray, mode: str) -> np.ndarray:
    """Each row's counts (rows x COUNT_WIDTH[mode]) from its raw reductions (rows x RAW_WIDTH[mode]) over `length`
    elements, `pad` of them zeros added to stack it beside others (instrument.in_graph_counts in numpy)."""
    if mode == "CURT_HEALTH":
        return np.clip(2 * length - raw[:, 0] - raw[:, 1], 0, 1)[:, None]
    below, above, zero, ninf, pinf = raw.T
    nan = length - below - above - zero
    if mode == "CONCISE_HEALTH":
        return np.stack([ninf, pinf, nan], 1)
    return np.stack([ninf, pinf, nan, below - ninf, zero - pad, above - pinf], 1)


def _rectifier(mode: str) -> np.ndarray:
    """instrument.rectified_counts as a matrix (counts @ it): -inf and negatives become zeros."""
    if mode == "CONCISE_HEALTH":
        return np.diag([0, 1, 1])
    m = np.zeros((6, 6), np.int64)
    m[1, 1] = m[2, 2] = m[5, 5] = 1
    m[0, 4] = m[3, 4] = m[4, 4] = 1
    return m


class RawLayout:
    """Where each counted tensor's raw reductions lie in the call's raw vector, built while tracing."""

    def __init__(self, mode: str, width: int) -> None:
        self.mode, self.width = mode, width
        self._pieces: list[Any] = []  # traced int32 vectors, joined once
        self._size = 0
        self._base: dict[int, tuple[np.ndarray, int, int]] = {}  # row -> (positions, elements, padding)
        self._adopted: dict[int, tuple[int, int]] = {}  # row -> (start, length) of a body's final counts
        self._rectified: dict[int, tuple[int, int]] = {}  # row -> (input's row, factor)

    def _add(self, piece: Any) -> int:
        start = self._size
        self._pieces.append(piece)
        self._size += int(piece.shape[0])
        return start

    def tensor(self, row: int, reductions: list[Any], elements: int) -> None:
        """One tensor's raw reductions (scalars)."""
        start = self._add(jnp.stack(reductions))
        self._base[row] = (start + np.arange(len(reductions)), elements, 0)

    def group(self, rows: list[int], reductions: list[Any], length: int, pads: list[int]) -> None:
        """Stacked tensors' raw reductions (one vector per reduction, an element per tensor, padded to `length`)."""
        start = self._add(jnp.concatenate(reductions))
        for j, (row, pad) in enumerate(zip(rows, pads, strict=True)):
            self._base[row] = (start + j + len(rows) * np.arange(len(reductions)), length, pad)

    def adopted(self, row: int, counts: Any) -> None:
        """A body's payload: final counts already."""
        self._adopted[row] = (self._add(jnp.ravel(counts)), int(np.size(counts)))

    def rectified(self, row: int, of: tuple[int, int]) -> None:
        self._rectified[row] = of

    def _resolve(self, row: int) -> tuple[int, int, bool]:
        """(row with raw reductions, factor, rectified) of a row (rectifying twice is rectifying once)."""
        if row not in self._rectified:
            return row, 1, False
        of, factor = self._rectified[row]
        base, by, _ = self._resolve(of)
        return base, by * factor, True

    def finish(self, values: list[tuple[int, int]]) -> tuple[Any, HostCounts]:
        """The raw vector to return from the program, and what makes the points' counts from it on the host."""
        raw = jnp.concatenate(self._pieces) if self._pieces else jnp.zeros((0,), jnp.int32)
        return raw, HostCounts(self, values)


class HostCounts:
    """The points' counts (one flat vector, points x COUNT_WIDTH) from a call's raw vector, as numpy index arrays."""

    def __init__(self, layout: RawLayout, values: list[tuple[int, int]]) -> None:
        self.mode, width = layout.mode, layout.width
        self._rectifier = _rectifier(self.mode) if self.mode != "CURT_HEALTH" else None
        positions, elements, pads, factors, rectified, dst, copy_dst, copy_src = [], [], [], [], [], [], [], []
        at = 0
        for row, factor in values:
            if row in layout._adopted:
                start, length = layout._adopted[row]
                copy_dst.append(np.arange(at, at + length))
                copy_src.append(np.arange(start, start + length))
                at += length
                continue
            base, by, rect = layout._resolve(row)
            where, n, pad = layout._base[base]
            positions.append(where)
            elements.append(n)
            pads.append(pad)
            factors.append(by * factor)
            rectified.append(rect)
            dst.append(np.arange(at, at + width))
            at += width
        self.size = at
        self._positions = np.array(positions, np.int64).reshape(len(positions), -1)
        self._elements, self._pads = np.array(elements, np.int64), np.array(pads, np.int64)
        self._factors = np.array(factors, np.int64)[:, None]
        self._rectified = np.flatnonzero(rectified)
        self._dst = np.concatenate(dst) if dst else np.zeros(0, np.int64)
        self._copy_dst = np.concatenate(copy_dst) if copy_dst else None
        self._copy_src = np.concatenate(copy_src) if copy_src else None

    def __call__(self, raw: np.ndarray) -> np.ndarray:
        raw = np.asarray(raw).astype(np.int64, copy=False)
        out = np.zeros(self.size, np.int64)
        if len(self._positions):
            counts = derive(raw[self._positions], self._elements, self._pads, self.mode)
            if self._rectifier is not None and len(self._rectified):
                counts[self._rectified] = counts[self._rectified] @ self._rectifier
            out[self._dst] = (counts * self._factors).reshape(-1)
        if self._copy_dst is not None:
            out[self._copy_dst] = raw[self._copy_src]
        return out

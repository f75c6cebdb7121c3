"""A jitted call's counts derived on the host: the program returns only its raw reductions, one int32 vector.

On XLA:CPU every small operation after a count reduction is a kernel launch of its own (a few microseconds each,
whatever its size): deriving NaN as size - (< 0) - (> 0) - (== 0), taking padding off a zero count, scaling a
reshaped tensor's counts and rectifying a ReLU's made ~130 of them on a small conv net's step (its plain program
has 25 fusions). So the top-level program hands out the reductions as they come out (the writer's thread
turns them into each point's counts, in a few numpy steps laid out at trace time); loop bodies and branches keep
deriving their counts in the program (instrument.in_graph_counts), their payloads travel inside the raw vector as is.
The counts written are the same either way.
"""

from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp
import numpy as np

# the raw reductions per tensor: CURT_HEALTH counts (< inf, > -inf); the others (< 0, > 0, == 0, == -inf, == inf)
RAW_WIDTH = {"CURT_HEALTH": 2, "CONCISE_HEALTH": 5, "FULL_HEALTH": 5}


def _derivation(mode: str, elements: int, pad: int) -> tuple[np.ndarray, np.ndarray]:
    """instrument.in_graph_counts as a linear map: counts = coefficients @ raw + constants (COUNT_WIDTH x RAW_WIDTH,
    and COUNT_WIDTH), for raw reductions over `elements` elements, `pad` of them zeros added to stack the tensor
    beside others (CURT_HEALTH's flag is this clipped to 1)."""
    if mode == "CURT_HEALTH":  # 2 * size - (< inf) - (> -inf)
        return np.array([[-1, -1]]), np.array([2 * elements])
    # raw: below, above, zero, ninf, pinf; NaN is size - below - above - zero
    ninf, pinf, nan = [0, 0, 0, 1, 0], [0, 0, 0, 0, 1], [-1, -1, -1, 0, 0]
    if mode == "CONCISE_HEALTH":
        return np.array([ninf, pinf, nan]), np.array([0, 0, elements])
    neg, zero, pos = [1, 0, 0, -1, 0], [0, 0, 1, 0, 0], [0, 1, 0, 0, -1]
    return np.array([ninf, pinf, nan, neg, zero, pos]), np.array([0, 0, elements, 0, -pad, 0])


def _rectifier(mode: str) -> np.ndarray:
    """instrument.rectified_counts as a matrix (it @ counts): -inf and negatives become zeros."""
    if mode == "CONCISE_HEALTH":
        return np.diag([0, 1, 1])
    m = np.zeros((6, 6), np.int64)
    m[1, 1] = m[2, 2] = m[5, 5] = 1
    m[4, 0] = m[4, 3] = m[4, 4] = 1
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
    """The points' counts (one flat vector, points x COUNT_WIDTH) from a call's raw vector: each a linear combination
    of a few raw reductions plus a constant, laid out at trace time as index and coefficient arrays (one gather and
    one weighted sum per call, whatever the number of points)."""

    def __init__(self, layout: RawLayout, values: list[tuple[int, int]]) -> None:
        self.mode, width = layout.mode, layout.width
        raw_width = RAW_WIDTH[self.mode]
        index: list[np.ndarray] = []  # per output entry: the raw positions it reads
        weights: list[np.ndarray] = []  # and their coefficients
        constants: list[np.ndarray] = []
        for row, factor in values:
            if row in layout._adopted:  # copied as it is
                start, length = layout._adopted[row]
                at = np.zeros((length, raw_width), np.int64)
                at[:, 0] = np.arange(start, start + length)
                weight = np.zeros((length, raw_width), np.int64)
                weight[:, 0] = 1
                index.append(at)
                weights.append(weight)
                constants.append(np.zeros(length, np.int64))
                continue
            base, by, rectified = layout._resolve(row)
            where, elements, pad = layout._base[base]
            coefficients, constant = _derivation(self.mode, elements, pad)
            if rectified and self.mode == "CURT_HEALTH":  # max(x, 0) is NaN or inf where x is not < inf
                coefficients, constant = np.array([[-1, 0]]), np.array([elements])
            elif rectified:
                coefficients, constant = _rectifier(self.mode) @ coefficients, _rectifier(self.mode) @ constant
            index.append(np.broadcast_to(where, (width, raw_width)))
            weights.append(coefficients * by * factor)
            constants.append(constant * by * factor)
        index_all = np.concatenate(index) if index else np.zeros((0, raw_width), np.int64)
        weights_all = np.concatenate(weights) if weights else np.zeros((0, raw_width), np.int64)
        self._constants = np.concatenate(constants) if constants else np.zeros(0, np.int64)
        # only the terms with a coefficient (most counts read one or two reductions of five): entry, position, weight
        terms = weights_all != 0
        self._entries, self._at = np.nonzero(terms)[0], index_all[terms]
        self._weights = weights_all[terms].astype(np.float64)  # float64 sums of int32 counts times small factors: exact
        # (calls derived together, raw length) -> their terms' positions, entries and weights
        self._laid_out: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def __call__(self, raw: Any) -> np.ndarray:
        """The counts (int64) of one call's raw vector, or of each row of several calls' (calls x raw length)."""
        values = np.asarray(raw)
        calls = values.shape[:-1]
        rows, size = math.prod(calls), len(self._constants)
        laid = self._laid_out.get((rows, values.shape[-1]))
        if laid is None:  # the terms of each call after the previous call's, in the flat values and counts
            at = (np.arange(rows)[:, None] * values.shape[-1] + self._at).ravel()
            entries = (np.arange(rows)[:, None] * size + self._entries).ravel()
            laid = self._laid_out[(rows, values.shape[-1])] = (at, entries, np.tile(self._weights, rows))
        at, entries, weights = laid
        sums = np.bincount(entries, weights=values.ravel()[at] * weights, minlength=rows * size).reshape(*calls, size)
        counts = sums.astype(np.int64) + self._constants
        return np.minimum(counts, 1) if self.mode == "CURT_HEALTH" else counts

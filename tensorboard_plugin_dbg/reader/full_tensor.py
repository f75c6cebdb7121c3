"""FULL_TENSOR values as stored: bfloat16 widened exactly, string tensor_content decoded, non-finite elements counted
in blocks. No protobuf here (debug_values and tensor_content build on it)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..wire import types as wire


def widen_bfloat16(raw: np.ndarray) -> np.ndarray:
    """bfloat16 values (their raw 16-bit words, "<u2") as float32: the same numbers, exactly."""
    return (raw.astype(np.uint32) << 16).view(np.float32)


def content_values(raw: np.ndarray, dtype: str) -> np.ndarray:
    """Stored elements (tensor_content's dtype) as numbers to compute with: bfloat16 widened, others as they are."""
    return widen_bfloat16(raw) if dtype == "bfloat16" else raw


def string_content(data: bytes, count: int) -> np.ndarray:
    """A string tensor's tensor_content (TF's EncodeStringList: `count` varint lengths, then the bytes) as an
    object array of bytes. Raises ValueError when the bytes do not hold that."""
    lengths, pos = [], 0
    for _ in range(count):
        value = shift = 0
        while True:
            if pos >= len(data) or shift > 35:
                raise ValueError("string tensor_content ends inside its lengths")
            b = data[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        lengths.append(value)
    if pos + sum(lengths) != len(data):
        raise ValueError("string tensor_content does not match its lengths")
    out = np.empty(count, dtype=object)
    for i, n in enumerate(lengths):
        out[i] = data[pos : pos + n]
        pos += n
    return out


COUNT_BLOCK = 1 << 21  # elements per block when counting or summarizing a big FULL_TENSOR value


def count_nonfinite(stored: np.ndarray, dtype: str) -> tuple[float, float, float, float] | None:
    """(neg_inf, pos_inf, nan, size) of a flat FULL_TENSOR value's stored elements (bfloat16 as raw "<u2"), in blocks
    (no copy of the tensor, no float64 widening); None when all are finite or the dtype has no non-finite values
    (ints, bools; complex and strings are not counted, as summarize_array does not)."""
    if not (stored.dtype.kind == "f" or dtype == "bfloat16"):
        return None
    neg = pos = nan = 0
    for first in range(0, len(stored), COUNT_BLOCK):
        x = content_values(stored[first : first + COUNT_BLOCK], dtype)
        finite = np.isfinite(x)
        if finite.all():
            continue
        bad = x[~finite]
        n = int(np.count_nonzero(np.isnan(bad)))
        nan += n
        pos += int(np.count_nonzero(bad > 0))
        neg += len(bad) - n - int(np.count_nonzero(bad > 0))
    return (float(neg), float(pos), float(nan), float(len(stored))) if neg or pos or nan else None


def summarize_blocks(parts: Iterable[np.ndarray], dtype: str, shape: list[int], size: int) -> wire.HealthFullTensor:
    """debug_values.summarize_array of a big tensor (wire.ts HealthFullTensor) from its decoded blocks, never the whole
    tensor at once nor widened to float64: the same counts, min and max, the mean summed in float64 block by block."""
    counts = dict.fromkeys(_COUNTS, 0)
    lo, hi, total, n = np.inf, -np.inf, 0.0, 0
    for x in parts:
        if x.dtype.kind in "cO":  # complex, strings: no counts or stats, as summarize_array says
            return health_summary(dtype, shape, size, dict.fromkeys(_COUNTS), None)
        if x.dtype.kind == "f":
            finite = np.isfinite(x)
            if not finite.all():
                bad = x[~finite]
                counts["nan"] += int(np.count_nonzero(np.isnan(bad)))
                counts["pos_inf"] += int(np.count_nonzero(bad > 0))
                counts["neg_inf"] += int(np.count_nonzero(bad < 0))
                x = x[finite]
        neg, zero = int(np.count_nonzero(x < 0)), int(np.count_nonzero(x == 0))
        counts["neg"] += neg
        counts["zero"] += zero
        counts["pos"] += len(x) - neg - zero
        if len(x):
            lo, hi = min(lo, float(x.min())), max(hi, float(x.max()))
            total += float(np.add.reduce(x, dtype=np.float64))
            n += len(x)
    return health_summary(dtype, shape, size, {**counts}, (lo, hi, total / n) if n else None)


_COUNTS = ("neg_inf", "pos_inf", "nan", "neg", "zero", "pos")


def health_summary(
    dtype: str, shape: list[int], size: int, counts: dict[str, int | None], stats: tuple[float, float, float] | None
) -> wire.HealthFullTensor:
    """HealthFullTensor of the counts and the (min, max, mean) of the finite elements (None: none, or no stats)."""
    lo, hi, mean = stats if stats is not None else (None, None, None)
    return {
        "mode": "FULL_TENSOR",
        "dtype": dtype,
        "shape": list(shape),
        "size": size,
        "neg_inf": counts["neg_inf"],
        "pos_inf": counts["pos_inf"],
        "nan": counts["nan"],
        "neg": counts["neg"],
        "zero": counts["zero"],
        "pos": counts["pos"],
        "min": lo,
        "max": hi,
        "mean": mean,
    }

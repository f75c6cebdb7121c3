"""Per-mode decoding of the health modes' debug vectors (CURT_HEALTH, CONCISE_HEALTH, FULL_HEALTH, SHAPE): a float64
vector, whose layout depends on the mode (see the format notes), to wire.ts `TensorHealth`, for one vector or a
page of them at once, and back (`vector_of`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..wire import types as wire
from .schema import MODE_NAMES
from .tensor_proto import DTYPES, dtype_name

HEALTH_LEN = {2: 2, 3: 5, 4: 11, 5: 10}  # mode -> elements of its vector


def health_from_vector(mode: int, v: np.ndarray) -> wire.TensorHealth:
    """TensorHealth from a health-mode debug vector (already a float64 array)."""
    need = HEALTH_LEN.get(mode)
    if need is None:
        return {"mode": "UNKNOWN", "reason": f"mode {MODE_NAMES.get(mode, mode)} has no health vector"}
    if len(v) < need:
        return {"mode": "UNKNOWN", "reason": f"{MODE_NAMES[mode]} vector has {len(v)} elements, expected {need}"}
    # Python floats, not numpy scalars: ~10x cheaper per element, and a page decodes 100 of these vectors
    i = [int(x) if math.isfinite(x) else 0 for x in v[:need].tolist()]
    return _BUILD[mode](i, bool(v[1] != 0))


# The TensorHealth dict of each health mode, from its vector's elements as ints (non-finite ones as 0) and
# whether element 1 is non-zero (CURT_HEALTH's flag). One place builds these dicts, for one vector and for a page.
def _curt(i: list[int], flagged: bool) -> wire.HealthCurt:
    return {"mode": "CURT_HEALTH", "tensor_id": i[0], "any_inf_or_nan": flagged}


def _concise(i: list[int], flagged: bool) -> wire.HealthConcise:
    return {"mode": "CONCISE_HEALTH", "tensor_id": i[0], "size": i[1], "neg_inf": i[2], "pos_inf": i[3], "nan": i[4]}


def _full(i: list[int], flagged: bool) -> wire.HealthFull:
    return {
        "mode": "FULL_HEALTH",
        "tensor_id": i[0],
        "device_id": i[1],
        "dtype": _DTYPE_NAMES.get(i[2]) or dtype_name(i[2]),
        "rank": i[3],
        "size": i[4],
        "neg_inf": i[5],
        "pos_inf": i[6],
        "nan": i[7],
        "neg": i[8],
        "zero": i[9],
        "pos": i[10],
    }


def _shape(i: list[int], flagged: bool) -> wire.HealthShape:
    rank = i[2]
    kept = min(rank, 6)
    return {
        "mode": "SHAPE",
        "tensor_id": i[0],
        "dtype": _DTYPE_NAMES.get(i[1]) or dtype_name(i[1]),
        "rank": rank,
        "size": i[3],
        "shape": [*i[4 : 4 + kept]],
        "shape_truncated": rank > 6,
    }


_BUILD: dict[int, Callable[[list[int], bool], wire.TensorHealth]] = {2: _curt, 3: _concise, 4: _full, 5: _shape}
_DTYPE_NAMES = {code: entry[0] for code, entry in DTYPES.items()}


# Below this magnitude a float64 converts to the same integer with numpy's astype(int64) as with Python's int()
# (both truncate toward zero); beyond it int64 would overflow, so such a vector takes health_from_vector.
_EXACT_INT = 2.0**62


def health_rows(mode: int, vectors: np.ndarray) -> list[wire.TensorHealth]:
    """health_from_vector of each row of `vectors` (float64, shape (N, k), k >= the mode's vector length), for a
    page of health-mode traces at once: the float -> int conversion is one numpy operation instead of a Python
    loop per element. Gives exactly what health_from_vector gives, row by row (tests/test_debug_values_batch.py)."""
    need = HEALTH_LEN[mode]
    v = vectors[:, :need]
    ints = np.where(np.isfinite(v), v, 0.0)
    big = np.abs(ints) >= _EXACT_INT
    odd = big.any(axis=1)
    if odd.any():
        ints[big] = 0.0  # (their rows are redone below)
    flagged = (v[:, 1] != 0).tolist()
    out = list(map(_BUILD[mode], ints.astype(np.int64).tolist(), flagged))
    for k in np.flatnonzero(odd).tolist():
        out[k] = health_from_vector(mode, v[k])
    return out


# mode -> bytes of its float64 health vector (0: not a health mode); index it with np.clip(modes, 0, 15). The
# indexer's fast decoder (trace_fast.py) checks trace records' content vectors against the same table.
VECTOR_BYTES = np.zeros(16, np.int64)
for _mode, _n in HEALTH_LEN.items():
    VECTOR_BYTES[_mode] = 8 * _n

_VECTOR_FIELDS = {
    "CURT_HEALTH": ("tensor_id", "any_inf_or_nan"),
    "CONCISE_HEALTH": ("tensor_id", "size", "neg_inf", "pos_inf", "nan"),
    "FULL_HEALTH": (
        "tensor_id",
        "device_id",
        "dtype",
        "rank",
        "size",
        "neg_inf",
        "pos_inf",
        "nan",
        "neg",
        "zero",
        "pos",
    ),
    "SHAPE": ("tensor_id", "dtype", "rank", "size"),
}
_DTYPE_CODES = {name: code for code, name in _DTYPE_NAMES.items()}


def vector_of(health: Mapping[str, Any] | None) -> np.ndarray:  # any mode's TensorHealth, read by field name
    """The debug vector (NaN-padded to 11) a health dict was decoded from: the inverse of health_from_vector, for
    the rare records the vectorized path leaves to protobuf."""
    out = np.full(11, np.nan)
    fields = _VECTOR_FIELDS.get(str((health or {}).get("mode", "")))
    if not fields or health is None:
        return out
    for i, name in enumerate(fields):
        value = health.get(name)
        if name == "dtype":
            value = _DTYPE_CODES.get(str(value))
        out[i] = np.nan if value is None else float(value)
    if health["mode"] == "SHAPE":
        dims = list(health.get("shape") or [])[:6]
        out[4 : 4 + len(dims)] = dims
        out[4 + len(dims) : 10] = 0
    return out

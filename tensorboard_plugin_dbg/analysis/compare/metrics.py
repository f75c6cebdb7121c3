"""How far apart two aligned tensors are, by what both dumps recorded, and what counts as "differs".

FULL_TENSOR: bitwise equal first (the stored bytes compared, so equal tensors cost one read and one memcmp), then max
abs, max rel, mean abs and cosine over float64; beyond tolerance when any |b - a| > atol + rtol * |a| (NaN only on
one side differs; NaN at the same place on both does not). Health modes (CURT / CONCISE / FULL_HEALTH) and SHAPE:
their counts, dtype and shape are compared exactly, column by column, for whole blocks of traces at once.

Tolerances per dtype (TOLERANCE_BY_DTYPE, documented in the CLI's help and ARCHITECTURE.md): float64 tight, float32
at float32's rounding, float16/bfloat16 looser, integers and bool exact. `--atol`/`--rtol` replace the float
defaults; `--tol PATTERN=X` sets atol = rtol = X for ops whose name matches the glob PATTERN (first match wins).
"""

from __future__ import annotations

import dataclasses
import fnmatch
from typing import Any, cast

import numpy as np

from tensorboard_plugin_dbg.reader import debug_values, tensor_content
from tensorboard_plugin_dbg.reader.tensor_content import TensorLocation
from tensorboard_plugin_dbg.wire import types as wire

# (atol, rtol) by dtype: what rounding alone moves between two runs of one computation on that dtype.
TOLERANCE_BY_DTYPE: dict[str, tuple[float, float]] = {
    "float64": (1e-12, 1e-9),
    "float32": (1e-6, 1e-5),
    "float16": (1e-3, 1e-3),
    "bfloat16": (1e-2, 1e-2),
    "complex64": (1e-6, 1e-5),
    "complex128": (1e-12, 1e-9),
}
EXACT = (0.0, 0.0)  # integers, bool, strings

# Debug-vector columns each mode records that a comparison reads (tfdbg2-format.md), and what each column counts.
HEALTH_COLUMNS: dict[int, tuple[int, ...]] = {
    2: (1,),
    3: (1, 2, 3, 4),
    4: (2, 3, 4, 5, 6, 7, 8, 9, 10),
    5: (1, 2, 3, 4, 5, 6, 7, 8, 9),
}
COLUMN_NAMES: dict[int, dict[int, str]] = {
    2: {1: "inf/nan"},
    3: {1: "size", 2: "-inf", 3: "+inf", 4: "nan"},
    4: {2: "dtype", 3: "rank", 4: "size", 5: "-inf", 6: "+inf", 7: "nan", 8: "negative", 9: "zero", 10: "positive"},
    5: {1: "dtype", 2: "rank", 3: "size", 4: "d0", 5: "d1", 6: "d2", 7: "d3", 8: "d4", 9: "d5"},
}


@dataclasses.dataclass(frozen=True)
class Tolerances:
    atol: float | None = None  # replaces every float dtype's default atol
    rtol: float | None = None
    by_op: tuple[tuple[str, float], ...] = ()  # (glob on the op name, atol = rtol)

    def of(self, dtype: str, op_name: str | None) -> tuple[float, float]:
        if dtype not in TOLERANCE_BY_DTYPE:
            return EXACT
        for pattern, tol in self.by_op:
            if op_name is not None and fnmatch.fnmatchcase(op_name, pattern):
                return tol, tol
        atol, rtol = TOLERANCE_BY_DTYPE[dtype]
        return (atol if self.atol is None else self.atol), (rtol if self.rtol is None else self.rtol)

    def as_dict(self) -> dict[str, object]:
        return {
            "defaults": {k: {"atol": v[0], "rtol": v[1]} for k, v in TOLERANCE_BY_DTYPE.items()},
            "atol": self.atol,
            "rtol": self.rtol,
            "by_op": [{"pattern": p, "tol": t} for p, t in self.by_op],
        }


def parse_tol(text: str) -> tuple[str, float]:
    """`PATTERN=X` -> (PATTERN, X); ValueError with a message otherwise."""
    pattern, sep, value = text.rpartition("=")
    if not sep or not pattern:
        raise ValueError(f"--tol {text!r}: expected PATTERN=X (an op-name glob and a tolerance)")
    try:
        tol = float(value)
    except ValueError:
        raise ValueError(f"--tol {text!r}: {value!r} is not a number") from None
    if not tol >= 0:
        raise ValueError(f"--tol {text!r}: the tolerance must be >= 0")
    return pattern, tol


Metric = wire.CompareMetric  # how two aligned tensors differ (only the fields their mode can tell)


# ----------------------------------------------------------------------------------------------- health modes
HEALTH_MODES = (2, 3, 4)  # CURT_HEALTH < CONCISE_HEALTH < FULL_HEALTH: each records what the one before does, and more


def common_level(mode_a: int, mode_b: int) -> int | None:
    """The mode whose columns both records hold (the lower health mode), or None when they hold nothing in common."""
    if mode_a == mode_b:
        return mode_a
    if mode_a in HEALTH_MODES and mode_b in HEALTH_MODES:
        return min(mode_a, mode_b)
    return None


def canonical_columns(mode: int, v: np.ndarray, level: int) -> np.ndarray:
    """Vectors of `mode` (n x 11) as the columns of health mode `level` <= mode: FULL_HEALTH's counts read as
    CONCISE_HEALTH's, any count of NaN/∞ as CURT_HEALTH's flag."""
    if mode == level:
        return v[:, list(HEALTH_COLUMNS.get(level, ()))]
    nonfinite = {3: [2, 3, 4], 4: [5, 6, 7]}[mode]
    if level == 2:
        return (np.nansum(v[:, nonfinite], axis=1) > 0).astype(np.float64)[:, None]
    return v[:, [4, 5, 6, 7]]  # FULL_HEALTH's size, -inf, +inf, NaN as CONCISE_HEALTH's


def health_differs(mode_a: int, mode_b: int, va: np.ndarray, vb: np.ndarray) -> np.ndarray:
    """bool[n]: rows whose recorded counts/dtype/shape differ, on what both modes record (vectors as
    RunQueries.trace_vectors lays them); every row differs when the modes share nothing."""
    level = common_level(mode_a, mode_b)
    if level is None:
        return np.ones(len(va), bool)
    if level not in HEALTH_COLUMNS:
        return np.zeros(len(va), bool)
    a, b = canonical_columns(mode_a, va, level), canonical_columns(mode_b, vb, level)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    return ~same.all(axis=1)


def health_metric(mode_a: int, mode_b: int, va: np.ndarray, vb: np.ndarray) -> Metric:
    """The differing columns of one pair of debug vectors, e.g. {"zero": [0, 300]}."""
    level = common_level(mode_a, mode_b)
    if level is None or level not in HEALTH_COLUMNS:
        return {"differs": level is None, "summary": "nothing both runs record"}
    a, b = canonical_columns(mode_a, va[None, :], level)[0], canonical_columns(mode_b, vb[None, :], level)[0]
    names = [COLUMN_NAMES[level][col] for col in HEALTH_COLUMNS[level]]
    counts: dict[str, list[float]] = {}
    for name, x, y in zip(names, a.tolist(), b.tolist()):
        if not (x == y or (np.isnan(x) and np.isnan(y))):
            counts[name] = [x, y]
    text = ", ".join(f"{name} {_num(x)} → {_num(y)}" for name, (x, y) in counts.items())
    return {"differs": bool(counts), "counts": counts, "summary": text or "same counts"}


def _num(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:g}"


# ----------------------------------------------------------------------------------------------- FULL_TENSOR
def tensor_metric(loc_a: TensorLocation, loc_b: TensorLocation, tol: tuple[float, float]) -> Metric:
    """Metrics of two FULL_TENSOR values; `tol` is B's (atol, rtol)."""
    # built field by field, as the values allow (a Metric once `differs` and `summary` are in)
    out: dict[str, Any] = {"dtype_a": loc_a.dtype, "dtype_b": loc_b.dtype, "shape_a": list(loc_a.shape)}
    out["shape_b"] = list(loc_b.shape)
    raw_a = tensor_content.read_range(loc_a, 0, loc_a.size) if loc_a.storage else None
    raw_b = tensor_content.read_range(loc_b, 0, loc_b.size) if loc_b.storage else None
    if raw_a is None or raw_b is None:  # strings and other non-numeric values: not compared
        same_kind = loc_a.dtype == loc_b.dtype and loc_a.shape == loc_b.shape
        return cast(Metric, {**out, "differs": not same_kind, "summary": "not numeric: only dtype and shape compared"})
    same_layout = loc_a.dtype == loc_b.dtype and loc_a.shape == loc_b.shape
    if same_layout and raw_a.tobytes() == raw_b.tobytes():  # the hash path: no arithmetic for equal tensors
        return cast(Metric, {**out, "differs": False, "bitwise_equal": True, "summary": "bitwise equal"})
    out["bitwise_equal"] = False
    if loc_a.shape != loc_b.shape:
        return cast(Metric, {**out, "differs": True, "summary": f"shape {list(loc_a.shape)} → {list(loc_b.shape)}"})
    xa = _as_float(debug_values.content_values(raw_a, loc_a.dtype))
    xb = _as_float(debug_values.content_values(raw_b, loc_b.dtype))
    stats = _value_stats(xa, xb, tol)
    out.update(stats)
    if loc_a.dtype != loc_b.dtype:
        out["differs"] = True
        out["summary"] = f"dtype {loc_a.dtype} → {loc_b.dtype}; " + str(out["summary"])
    return cast(Metric, out)


def _as_float(x: np.ndarray) -> np.ndarray:
    if np.iscomplexobj(x):
        return np.abs(x).astype(np.float64)
    return x.astype(np.float64, copy=False).ravel()


def _value_stats(a: np.ndarray, b: np.ndarray, tol: tuple[float, float]) -> Metric:
    atol, rtol = tol
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    one_side = int(np.count_nonzero(nan_a != nan_b))
    with np.errstate(all="ignore"):
        same_inf = np.isinf(a) & (a == b)
        diff = np.where(same_inf | (nan_a & nan_b), 0.0, np.abs(b - a))
        finite = np.isfinite(diff)
        beyond = (diff > atol + rtol * np.abs(a)) | ~finite
        fd = diff[finite]
        rel = fd / np.maximum(np.abs(a[finite]), np.finfo(np.float64).tiny)
        max_abs = float(fd.max()) if len(fd) else None
        mean_abs = float(fd.mean()) if len(fd) else None
        max_rel = float(rel.max()) if len(rel) else None
        ok = np.isfinite(a) & np.isfinite(b)
        norm = float(np.linalg.norm(a[ok]) * np.linalg.norm(b[ok]))
        cosine = float(np.dot(a[ok], b[ok]) / norm) if norm > 0 else None
    differs = bool(beyond.any())
    text = f"max abs {_g(max_abs)}, max rel {_g(max_rel)}, mean abs {_g(mean_abs)}, cosine {_g(cosine)}"
    if one_side:
        text += f", NaN on one side at {one_side} element(s)"
    return {
        "differs": differs,
        "max_abs": max_abs,
        "max_rel": max_rel,
        "mean_abs": mean_abs,
        "cosine": cosine,
        "nan_only_one_side": one_side,
        "summary": text,
    }


def _g(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"

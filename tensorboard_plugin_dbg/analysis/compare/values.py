"""One tensor of run B beside its aligned counterpart in run A, and A − B: the Tensor Values view while comparing.

The counterpart comes from the comparison's alignment (align.py): B's trace row or execution index is looked up
among the aligned pairs (kept in B's row order, so one binary search). Each side is answered as the `tensor` route
answers it (analysis/tensor_values.py, with the same slice); A − B is computed over that slice only (tensor_slices
reads just its elements), with the largest |A − B| in it and its full index. Health modes and SHAPE: the fields both
records hold, counts as [A, B, A − B]. The whole tensors' measure is the comparison's own (metrics.py).
"""

from __future__ import annotations

from typing import TypeGuard, cast

import numpy as np
import numpy.typing as npt

from tensorboard_plugin_dbg.analysis import tensor_slices, tensor_values
from tensorboard_plugin_dbg.analysis.compare.comparison import Comparison
from tensorboard_plugin_dbg.analysis.compare.metrics import Metric, tensor_metric
from tensorboard_plugin_dbg.index.protocol import TensorRecord
from tensorboard_plugin_dbg.index.tensor_queries import Source
from tensorboard_plugin_dbg.reader import debug_values
from tensorboard_plugin_dbg.wire import types as wire

_NOT_COMPARED = {"mode", "tensor_id", "device_id", "reason", "shape_truncated"}  # a run's own numbering, or words


def counterpart(c: Comparison, source: Source, index: int) -> int | None:
    """A's trace row (graph) or execution index aligned with B's `index`, or None when only B holds it."""
    pairs = c.traces if source == "graph" else c.execs
    at = int(np.searchsorted(pairs.b, index))
    return int(pairs.a[at]) if at < len(pairs.b) and int(pairs.b[at]) == index else None


def compare_values(
    c: Comparison, source: Source, index: int, output: int | None, spec: str | None, bins: int
) -> wire.CompareValuesResponseBody:
    """wire.ts CompareValuesResponse minus `run`. NotFound for an unknown B tensor; tensor_slices.SliceError for a
    slice that does not fit B's tensor (one that fits B but not a reshaped A leaves A without values: `note`)."""
    b = cast(
        wire.TensorResponse, {"run": c.run_b.name, **tensor_values.tensor(c.run_b, source, index, output, spec, bins)}
    )
    out: wire.CompareValuesResponseBody = {
        "base": c.run_a.name,
        "b": b,
        "a": None,
        "status": "only_in_b",
        "metric": None,
        "difference": None,
        "health_difference": None,
        "note": None,
    }
    index_a = counterpart(c, source, index)
    if index_a is None:
        out["note"] = f"no counterpart in the baseline: run {c.run_a.name} holds no aligned {_what(source)} of this op"
        return out
    slot = int(b["tensor"]["output"])
    output_a = None if source == "graph" else slot
    try:
        answer_a = tensor_values.tensor(c.run_a, source, index_a, output_a, spec, bins)
    except tensor_slices.SliceError:  # A's tensor has another shape: its summary, no slice
        answer_a = tensor_values.tensor(c.run_a, source, index_a, output_a, None, bins)
        shape_a = answer_a["shape"]
        out["note"] = f"the slice does not fit the baseline's shape {shape_a}: baseline − changed is not defined"
    out["a"] = cast(wire.TensorResponse, {"run": c.run_a.name, **answer_a})
    out["status"] = "paired"
    rec_a = c.run_a.tensor_record(source, index_a, output_a)
    rec_b = c.run_b.tensor_record(source, index, output)
    if rec_a.location is not None and rec_b.location is not None:
        out["metric"] = _tensor_measure(c, rec_a, rec_b)
        if spec is not None and out["note"] is None:
            out["difference"], out["note"] = _slice_difference(rec_a, rec_b, spec)
    elif rec_a.health is not None and rec_b.health is not None:
        health = out["health_difference"] = health_difference(rec_a.health, rec_b.health)
        out["metric"] = _health_measure(health)
    else:
        out["note"] = "the two runs record this tensor in modes that share nothing to compare"
    return out


def _what(source: Source) -> str:
    return "graph execution trace" if source == "graph" else "eager execution"


def _tensor_measure(c: Comparison, rec_a: TensorRecord, rec_b: TensorRecord) -> Metric:
    loc_a, loc_b = rec_a.location, rec_b.location
    assert loc_a is not None and loc_b is not None
    with tensor_values.readable():
        return tensor_metric(loc_a, loc_b, c.tol.of(loc_b.dtype, rec_b.op_name or rec_b.op_type))


def _slice_difference(
    rec_a: TensorRecord, rec_b: TensorRecord, spec: str
) -> tuple[wire.TensorDifference | None, str | None]:
    """(A − B over the slice, None) or (None, why not)."""
    loc_a, loc_b = rec_a.location, rec_b.location
    assert loc_a is not None and loc_b is not None
    if tuple(loc_a.shape) != tuple(loc_b.shape):
        shapes = f"baseline {list(loc_a.shape)}, changed {list(loc_b.shape)}"
        return None, f"shapes differ ({shapes}): baseline − changed is not defined"
    items = tensor_slices.parse(spec, tuple(loc_b.shape))
    flat, out_shape = tensor_slices.selection(items, tuple(loc_b.shape))
    with tensor_values.readable():
        raw_a, raw_b = (tensor_slices.read(loc, spec)[2] for loc in (loc_a, loc_b))
    xa, xb = debug_values.content_values(raw_a, loc_a.dtype), debug_values.content_values(raw_b, loc_b.dtype)
    if xa.dtype.kind not in "fiub" or xb.dtype.kind not in "fiub":
        return None, f"{loc_b.dtype} values: baseline − changed is shown for real numbers only"
    diff = _difference(xa.astype(np.float64).ravel(), xb.astype(np.float64).ravel())
    mag = np.abs(diff)
    finite = np.isfinite(mag)
    best = int(np.argmax(np.where(finite, mag, -1.0))) if finite.any() else None
    argmax: list[float] | None = (
        None if best is None else [int(i) for i in np.unravel_index(int(flat[best]), tuple(loc_b.shape))]
    )
    difference: wire.TensorDifference = {
        "spec": tensor_slices.normalized(items),
        "shape": list(out_shape),
        "values": diff.tolist(),
        "max_abs": None if best is None else float(mag[best]),
        "argmax": argmax,
        "nonfinite": int(np.count_nonzero(~finite)),
    }
    return difference, None


def _difference(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """A − B, with 0 where both hold the same value even when that value is NaN or ±∞ (not a difference)."""
    with np.errstate(all="ignore"):
        diff = a - b
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    diff[same] = 0.0
    return diff


def health_difference(ha: wire.TensorHealth, hb: wire.TensorHealth) -> wire.HealthDifference:
    """The fields both healths hold: numbers as [A, B, A − B], other differing fields as "A → B"."""
    # the two healths field by field, by name (any of the four health modes' types)
    da, db = cast(dict[str, object], ha), cast(dict[str, object], hb)
    counts: dict[str, list[wire.Num]] = {}
    changed: list[str] = []
    for field in [f for f in da if f in db and f not in _NOT_COMPARED]:
        x, y = da[field], db[field]
        if _is_number(x) and _is_number(y):
            counts[field] = [x, y, float(x) - float(y)]
        elif x != y:
            changed.append(f"{field} {x} → {y}")
    return {"counts": counts, "changed": changed}


def _is_number(x: object) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _health_measure(diff: wire.HealthDifference) -> Metric:
    differing = {k: [float(v[0]), float(v[1])] for k, v in diff["counts"].items() if not _same(v[0], v[1])}
    text = [f"{k} {_num(a)} → {_num(b)}" for k, (a, b) in differing.items()] + diff["changed"]
    return {"differs": bool(text), "counts": differing, "summary": ", ".join(text) or "same counts"}


def _same(x: wire.Num, y: wire.Num) -> bool:
    fx, fy = float(x), float(y)
    return fx == fy or (np.isnan(fx) and np.isnan(fy))


def _num(x: float) -> str:
    return str(int(x)) if np.isfinite(x) and x == int(x) else f"{x:g}"

"""Decoding the debug tensor of a trace or an eager output into wire.ts `TensorHealth` dicts, whatever its mode,
and the non-finite counts of the alert table.

Health modes carry a float64 vector whose layout depends on the mode (health_vectors.py); FULL_TENSOR carries the
tensor itself (tensor_proto.py), as raw `tensor_content` for arrays but as typed fields (`float_val`, `half_val` ...)
for scalars, summarized here (a big one in blocks: full_tensor.py). Eager health records hold an empty TensorProto
for outputs that were not instrumented (non-float). Nothing here raises on bad input: an undecodable value becomes
{'mode': 'UNKNOWN', 'reason': ...}.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..wire import types as wire

# full_tensor's helpers are part of this module's interface (the layers above call them through it)
from .full_tensor import (  # noqa: F401
    COUNT_BLOCK,
    content_values,
    count_nonfinite,
    health_summary,
    string_content,
    summarize_blocks,
    widen_bfloat16,
)
from .health_vectors import health_from_vector
from .tensor_proto import is_empty_proto, parse_tensor_proto, tensor_to_numpy


def _health_vector(proto: Any) -> np.ndarray:  # a TensorProto (protobuf: untyped)
    if proto.tensor_content:
        return (
            np.frombuffer(proto.tensor_content, dtype="<f8")
            if proto.dtype == 2
            else tensor_to_numpy(proto)[0].astype(np.float64)
        )
    return np.array(list(proto.double_val) or list(proto.float_val), dtype=np.float64)


def summarize_array(arr: np.ndarray, dtype: str, shape: list[int]) -> wire.HealthFullTensor:
    """HealthFullTensor for a decoded tensor."""
    counts = ("neg_inf", "pos_inf", "nan", "neg", "zero", "pos")
    if arr.dtype == object or arr.dtype.kind == "c":
        return health_summary(dtype, shape, int(arr.size), dict.fromkeys(counts), None)
    if arr.dtype == np.bool_:
        arr = arr.astype(np.int64)
    if arr.dtype.kind == "f":
        a = arr.astype(np.float64)
        nan = np.isnan(a)
        posinf = np.isposinf(a)
        neginf = np.isneginf(a)
        finite = a[~(nan | posinf | neginf)]
    else:
        nan = posinf = neginf = np.zeros(0, dtype=bool)
        finite = arr.astype(np.float64)
    found: dict[str, int | None] = {
        "neg_inf": int(neginf.sum()),
        "pos_inf": int(posinf.sum()),
        "nan": int(nan.sum()),
        "neg": int((finite < 0).sum()),
        "zero": int((finite == 0).sum()),
        "pos": int((finite > 0).sum()),
    }
    stats = (float(finite.min()), float(finite.max()), float(finite.mean())) if finite.size else None
    return health_summary(dtype, shape, int(arr.size), found, stats)


def summarize_full_tensor(proto: Any) -> wire.HealthFullTensor | wire.HealthUnknown:
    try:
        arr, dtype, shape = tensor_to_numpy(proto)
    except Exception as exc:  # noqa: BLE001
        return {"mode": "UNKNOWN", "reason": f"undecodable FULL_TENSOR value: {exc}"}
    if arr.size > COUNT_BLOCK and arr.dtype.kind in "fiub":  # a big value: in blocks, not widened whole to float64
        step = COUNT_BLOCK
        return summarize_blocks((arr[k : k + step] for k in range(0, arr.size, step)), dtype, shape, int(arr.size))
    return summarize_array(arr, dtype, shape)


def decode_debug_value(mode: int, data: bytes | None, eager: bool = False) -> wire.TensorHealth:
    """TensorHealth for one debug tensor (serialized TensorProto bytes) recorded under `mode` (enum value)."""
    if mode == 1:
        return {"mode": "NO_TENSOR"}
    if data is None:
        return {"mode": "EMPTY"} if eager else {"mode": "UNKNOWN", "reason": "no debug tensor in the record"}
    proto = parse_tensor_proto(data)
    if proto is None:
        return {"mode": "UNKNOWN", "reason": "debug tensor does not parse"}
    if is_empty_proto(proto):
        return {"mode": "EMPTY"} if eager else {"mode": "UNKNOWN", "reason": "empty debug tensor"}
    if mode == 7:
        return summarize_full_tensor(proto)
    try:
        return health_from_vector(mode, _health_vector(proto))
    except Exception as exc:  # noqa: BLE001
        return {"mode": "UNKNOWN", "reason": f"undecodable debug tensor: {exc}"}


def nonfinite_counts(mode: int, data: bytes | None) -> tuple[float, float, float, float] | None:
    """(neg_inf, pos_inf, nan, size) for the alert table; -1 marks an unknown count; None when all finite or
    not knowable. FULL_TENSOR values are counted without summarizing them (count_nonfinite)."""
    if mode == 7:
        proto = parse_tensor_proto(data) if data is not None else None
        if proto is None or is_empty_proto(proto):
            return None
        try:
            stored, dtype, _shape = tensor_to_numpy(proto, raw_bfloat16=True)
        except Exception:  # noqa: BLE001 - undecodable: no counts, as before
            return None
        return count_nonfinite(stored, dtype) if stored.dtype != object else None
    health = decode_debug_value(mode, data)
    if health["mode"] == "CURT_HEALTH":
        return (-1.0, -1.0, -1.0, -1.0) if health["any_inf_or_nan"] else None
    if health["mode"] == "CONCISE_HEALTH" or health["mode"] == "FULL_HEALTH":
        if health["neg_inf"] or health["pos_inf"] or health["nan"]:
            return (float(health["neg_inf"]), float(health["pos_inf"]), float(health["nan"]), float(health["size"]))
    return None

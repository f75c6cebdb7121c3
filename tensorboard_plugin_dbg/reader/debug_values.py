"""Decoding the debug tensor of a trace or an eager output into wire.ts `TensorHealth` / `TensorValue` dicts.

Health modes carry a float64 vector whose layout depends on the mode (see the format notes); FULL_TENSOR carries the
tensor itself, as raw `tensor_content` for arrays but as typed fields (`float_val`, `half_val` ...) for scalars.
Eager health records hold an empty TensorProto for outputs that were not instrumented (non-float). Nothing here
raises on bad input: an undecodable value becomes {'mode': 'UNKNOWN', 'reason': ...}.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# full_tensor's helpers are part of this module's interface (the layers above call them through it)
from .full_tensor import (  # noqa: F401
    COUNT_BLOCK,
    content_values,
    count_nonfinite,
    string_content,
    summarize_blocks,
    widen_bfloat16,
)
from .schema import MODE_NAMES
from .trace_layout import fixed_layout

# DataType enum value -> (wire name, numpy dtype or None, TensorProto typed field used for scalars).
DTYPES: dict[int, tuple[str, str | None, str | None]] = {
    1: ("float32", "<f4", "float_val"),
    2: ("float64", "<f8", "double_val"),
    3: ("int32", "<i4", "int_val"),
    4: ("uint8", "u1", "int_val"),
    5: ("int16", "<i2", "int_val"),
    6: ("int8", "i1", "int_val"),
    7: ("string", None, "string_val"),
    8: ("complex64", "<c8", "scomplex_val"),
    9: ("int64", "<i8", "int64_val"),
    10: ("bool", "?", "bool_val"),
    11: ("qint8", "i1", "int_val"),
    12: ("quint8", "u1", "int_val"),
    13: ("qint32", "<i4", "int_val"),
    14: ("bfloat16", "bfloat16", "half_val"),
    15: ("qint16", "<i2", "int_val"),
    16: ("quint16", "<u2", "int_val"),
    17: ("uint16", "<u2", "int_val"),
    18: ("complex128", "<c16", "dcomplex_val"),
    19: ("float16", "<f2", "half_val"),
    20: ("resource", None, None),
    21: ("variant", None, None),
    22: ("uint32", "<u4", "uint32_val"),
    23: ("uint64", "<u8", "uint64_val"),
}
_HEALTH_LEN = {2: 2, 3: 5, 4: 11, 5: 10}


def dtype_name(enum_value: int) -> str:
    entry = DTYPES.get(int(enum_value))
    return entry[0] if entry else f"dtype_{int(enum_value)}"


def _tensor_proto_class():
    from tensorboard.compat.proto import tensor_pb2

    return tensor_pb2.TensorProto


def parse_tensor_proto(data: bytes):
    """TensorBoard's TensorProto from bytes, or None when it does not parse."""
    proto = _tensor_proto_class()()
    try:
        proto.ParseFromString(data)
    except Exception:  # noqa: BLE001
        return None
    return proto


def tensor_to_numpy(proto, raw_bfloat16: bool = False) -> tuple[np.ndarray, str, list[int]]:
    """(flat array, dtype name, shape). Strings come back as an object array of bytes. bfloat16 comes back widened
    to float32, or as its raw 16-bit words ("<u2") with `raw_bfloat16`."""
    name, np_dtype, typed_field = DTYPES.get(proto.dtype, (dtype_name(proto.dtype), None, None))
    shape = [int(d.size) for d in proto.tensor_shape.dim]
    size = int(np.prod(shape)) if shape else 1
    if proto.tensor_content:
        if name == "string":
            return string_content(proto.tensor_content, size), name, shape
        if np_dtype is None:
            raise ValueError(f"cannot decode tensor_content of dtype {name}")
        if np_dtype == "bfloat16":
            raw = np.frombuffer(proto.tensor_content, dtype="<u2")
            return (raw if raw_bfloat16 else widen_bfloat16(raw)), name, shape
        return np.frombuffer(proto.tensor_content, dtype=np_dtype), name, shape
    if typed_field is None:
        raise ValueError(f"no values for dtype {name}")
    values = list(getattr(proto, typed_field))
    if np_dtype == "<f2":
        arr = np.array(values, dtype=np.uint16).view(np.float16)
    elif np_dtype == "bfloat16":
        raw = np.array(values, dtype=np.uint32).astype("<u2")
        arr = raw if raw_bfloat16 else widen_bfloat16(raw)
    elif np_dtype is None:  # string
        arr = np.array(values, dtype=object)
    elif typed_field in ("scomplex_val", "dcomplex_val"):
        flat = np.array(values, dtype=np.float64)
        arr = (flat[0::2] + 1j * flat[1::2]).astype(np_dtype)
    else:
        arr = np.array(values, dtype=np_dtype)
    if len(arr) < size:  # TF repeats the last typed value to fill the shape (a scalar splat)
        fill = arr[-1] if len(arr) else (b"" if np_dtype is None else 0)
        arr = np.concatenate([arr, np.full(size - len(arr), fill, dtype=arr.dtype)])
    return arr[:size], name, shape


def _health_vector(proto) -> np.ndarray:
    if proto.tensor_content:
        return (
            np.frombuffer(proto.tensor_content, dtype="<f8")
            if proto.dtype == 2
            else tensor_to_numpy(proto)[0].astype(np.float64)
        )
    return np.array(list(proto.double_val) or list(proto.float_val), dtype=np.float64)


def is_empty_proto(proto) -> bool:
    return proto.dtype == 0 and not proto.tensor_content and not proto.tensor_shape.dim


def health_from_vector(mode: int, v: np.ndarray) -> dict[str, Any]:
    """TensorHealth from a health-mode debug vector (already a float64 array)."""
    need = _HEALTH_LEN.get(mode)
    if need is None:
        return {"mode": "UNKNOWN", "reason": f"mode {MODE_NAMES.get(mode, mode)} has no health vector"}
    if len(v) < need:
        return {"mode": "UNKNOWN", "reason": f"{MODE_NAMES[mode]} vector has {len(v)} elements, expected {need}"}
    # Python floats, not numpy scalars: ~10x cheaper per element, and a page decodes 100 of these vectors
    i = [int(x) if math.isfinite(x) else 0 for x in v[:need].tolist()]
    return _BUILD[mode](i, bool(v[1] != 0))


# The TensorHealth dict of each health mode, from its vector's elements as ints (non-finite ones as 0) and
# whether element 1 is non-zero (CURT_HEALTH's flag). One place builds these dicts, for one vector and for a page.
def _curt(i: list[int], flagged: bool) -> dict[str, Any]:
    return {"mode": "CURT_HEALTH", "tensor_id": i[0], "any_inf_or_nan": flagged}


def _concise(i: list[int], flagged: bool) -> dict[str, Any]:
    return {"mode": "CONCISE_HEALTH", "tensor_id": i[0], "size": i[1], "neg_inf": i[2], "pos_inf": i[3], "nan": i[4]}


def _full(i: list[int], flagged: bool) -> dict[str, Any]:
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


def _shape(i: list[int], flagged: bool) -> dict[str, Any]:
    rank = i[2]
    kept = min(rank, 6)
    return {
        "mode": "SHAPE",
        "tensor_id": i[0],
        "dtype": _DTYPE_NAMES.get(i[1]) or dtype_name(i[1]),
        "rank": rank,
        "size": i[3],
        "shape": i[4 : 4 + kept],
        "shape_truncated": rank > 6,
    }


_BUILD = {2: _curt, 3: _concise, 4: _full, 5: _shape}
_DTYPE_NAMES = {code: entry[0] for code, entry in DTYPES.items()}


# Below this magnitude a float64 converts to the same integer with numpy's astype(int64) as with Python's int()
# (both truncate toward zero); beyond it int64 would overflow, so such a vector takes health_from_vector.
_EXACT_INT = 2.0**62


def health_rows(mode: int, vectors: np.ndarray) -> list[dict[str, Any]]:
    """health_from_vector of each row of `vectors` (float64, shape (N, k), k >= the mode's vector length), for a
    page of health-mode traces at once: the float -> int conversion is one numpy operation instead of a Python
    loop per element. Gives exactly what health_from_vector gives, row by row (tests/test_debug_values_batch.py)."""
    need = _HEALTH_LEN[mode]
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
for _mode, _n in _HEALTH_LEN.items():
    VECTOR_BYTES[_mode] = 8 * _n
_ONE_DIM = np.array([0x12, 0x02, 0x08], np.uint8)
# What whole-run scans read of a vector: FULL_HEALTH's dtype, rank, size and zero count; SHAPE's all but the id;
# CONCISE_HEALTH's size and counts.
SUMMARY_ELEMENTS = {
    3: (1, 2, 3, 4),
    4: (2, 3, 4, 5, 6, 7, 9),
    5: (1, 2, 3, 4, 5, 6, 7, 8, 9),
}  # after the shape's length 4: dim { size: <one byte> }


def record_healths(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, modes: np.ndarray) -> list:
    """decode_debug_value(modes[k], <the record's tensor_proto>) for serialized DebugEvents buf[starts[k]:
    starts[k] + lengths[k]] holding graph execution traces, for the records whose bytes are TF's regular layout;
    None for the others (and where lengths[k] < 0), which the caller parses with protobuf (see record_vectors)."""
    out: list = [None] * len(starts)
    ok, vectors = record_vectors(buf, starts, lengths, modes)
    for mode in np.unique(modes[ok]).tolist():
        sel = np.flatnonzero(ok & (modes == mode))
        for k, health in zip(sel.tolist(), health_rows(mode, vectors[sel])):
            out[k] = health
    return out


def record_vectors(
    buf: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    modes: np.ndarray,
    strict: bool = True,
    elements: dict[int, tuple[int, ...]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(ok, vectors): the float64 health vector of each serialized graph execution trace buf[starts[k]:starts[k] +
    lengths[k]] in vectors[k, :len] (NaN-padded to 11 columns) where ok[k]: the records whose bytes are TF's
    regular layout in a health mode (CURT, CONCISE, FULL_HEALTH, SHAPE); the others are left to protobuf.

    Regular means what makes protobuf's answer certain without running it: trace_fast's fixed layout (every field
    once, in order, one-byte lengths), a float64 content vector of exactly the mode's length, a shape of one
    dimension, and ASCII in every byte but the wall time, the message length and the vector (so the strings are
    valid UTF-8 and the TensorProto parses). The vectors are gathered in one numpy operation per mode.

    strict=False skips the ASCII check (half the cost: a cumulative count over every byte) for whole-run scans of
    records the indexer already decoded: the layout checks still place the vector exactly; only whether protobuf
    would also accept the strings is left unproved. `elements` (mode -> vector elements): gather only those (the
    others stay NaN), e.g. SUMMARY_ELEMENTS: the gather of every byte of every vector is most of a scan's cost."""
    n = len(starts)
    ok_out = np.zeros(n, bool)
    vectors = np.full((n, 11), np.nan)
    need = VECTOR_BYTES[np.clip(modes, 0, 15)]
    cand = np.flatnonzero((need > 0) & (lengths >= 14))
    if not len(cand) or not len(buf):
        return ok_out, vectors
    s, e, need = starts[cand], starts[cand] + lengths[cand], need[cand]
    ok, t, proto, content, clen = fixed_layout(buf, s, e)
    # a shape of one dimension: 12 04 | 12 02 08 <size> | 22 <content length> <content>
    shape = buf.take(proto[:, None] + np.arange(4, 7), mode="clip")
    ok &= (clen == need) & (content == proto + 10) & (shape == _ONE_DIM).all(axis=1)
    if strict:
        # ASCII: no byte >= 0x80 in [t, content) nor [content + clen, e), from one cumulative count (int32: a
        # cumsum into int64 is 7x slower); it also makes the shape's size a one-byte varint
        high = np.zeros(len(buf) + 1, np.int32)
        np.cumsum(buf >= 0x80, dtype=np.int32, out=high[1:])
        count = high[np.minimum(np.stack([t, content, content + clen, e]), len(buf))]
        ok &= (count[0] == count[1]) & (count[2] == count[3])
    else:
        ok &= shape[:, 2] < 0x80  # the shape's size a one-byte varint (what the ASCII check also proved)
    cand_modes = modes[cand]
    for mode in np.unique(cand_modes[ok]).tolist():
        sel = np.flatnonzero(ok & (cand_modes == mode))
        idx = np.array((elements or {}).get(mode, range(_HEALTH_LEN[mode])), np.int64)
        offsets = (8 * idx[:, None] + np.arange(8)).reshape(-1)
        vectors[cand[sel][:, None], idx] = buf[content[sel][:, None] + offsets].view("<f8")
        ok_out[cand[sel]] = True
    return ok_out, vectors


def kind_vectors(
    buf: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    modes: np.ndarray,
    kinds: np.ndarray,
    elements: dict[int, tuple[int, ...]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """record_vectors(strict=False) for whole-run scans, the layout found once per trace kind: the records of one
    kind are equal but for their wall time (a fixed 8 bytes) and their vector, so the vector of a record as long as
    its kind's first one sits where the first one's does. That place comes from record_vectors' layout checks on
    each kind's first record of the block, and every record is checked there by the vector's tag and length bytes
    (0x22 <length>); the others go through record_vectors. Half a scan's cost was the layout of every record."""
    n = len(starts)
    ok_out = np.zeros(n, bool)
    vectors = np.full((n, 11), np.nan)
    if not n or not len(buf):
        return ok_out, vectors
    uniq, first = np.unique(kinds, return_index=True)
    f_start, f_len = starts[first], lengths[first]
    ok_f, _t, proto, content, clen = fixed_layout(buf, f_start, f_start + np.maximum(f_len, 0))
    need_f = VECTOR_BYTES[np.clip(modes[first], 0, 15)]
    shape = buf.take(proto[:, None] + np.arange(4, 7), mode="clip")
    ok_f &= (f_len >= 14) & (need_f > 0) & (clen == need_f) & (content == proto + 10)
    ok_f &= (shape == _ONE_DIM).all(axis=1) & (shape[:, 2] < 0x80)
    at = np.searchsorted(uniq, kinds)
    pos = starts + (content - f_start)[at]
    need = VECTOR_BYTES[np.clip(modes, 0, 15)]
    good = ok_f[at] & (lengths == f_len[at]) & (lengths >= 0)
    good &= (buf.take(pos - 2, mode="clip") == 0x22) & (buf.take(pos - 1, mode="clip") == need)
    for mode in np.unique(modes[good]).tolist():
        sel = np.flatnonzero(good & (modes == mode))
        idx = np.array((elements or {}).get(mode, range(_HEALTH_LEN[mode])), np.int64)
        offsets = (8 * idx[:, None] + np.arange(8)).reshape(-1)
        vectors[sel[:, None], idx] = buf[pos[sel][:, None] + offsets].view("<f8")
        ok_out[sel] = True
    rest = np.flatnonzero(~good)
    if len(rest):
        ok_r, got = record_vectors(buf, starts[rest], lengths[rest], modes[rest], strict=False, elements=elements)
        vectors[rest] = got
        ok_out[rest] = ok_r
    return ok_out, vectors


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


def vector_of(health: dict[str, Any] | None) -> np.ndarray:
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


def summarize_array(arr: np.ndarray, dtype: str, shape: list[int]) -> dict[str, Any]:
    """HealthFullTensor for a decoded tensor."""
    out: dict[str, Any] = {"mode": "FULL_TENSOR", "dtype": dtype, "shape": shape, "size": int(arr.size)}
    nulls = dict.fromkeys(("neg_inf", "pos_inf", "nan", "neg", "zero", "pos", "min", "max", "mean"))
    if arr.dtype == object or arr.dtype.kind == "c":
        out.update(nulls)
        return out
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
    out.update(
        {
            "neg_inf": int(neginf.sum()),
            "pos_inf": int(posinf.sum()),
            "nan": int(nan.sum()),
            "neg": int((finite < 0).sum()),
            "zero": int((finite == 0).sum()),
            "pos": int((finite > 0).sum()),
        }
    )
    if finite.size:
        out.update({"min": float(finite.min()), "max": float(finite.max()), "mean": float(finite.mean())})
    else:
        out.update({"min": None, "max": None, "mean": None})
    return out


def summarize_full_tensor(proto) -> dict[str, Any]:
    try:
        arr, dtype, shape = tensor_to_numpy(proto)
    except Exception as exc:  # noqa: BLE001
        return {"mode": "UNKNOWN", "reason": f"undecodable FULL_TENSOR value: {exc}"}
    if arr.size > COUNT_BLOCK and arr.dtype.kind in "fiub":  # a big value: in blocks, not widened whole to float64
        step = COUNT_BLOCK
        return summarize_blocks((arr[k : k + step] for k in range(0, arr.size, step)), dtype, shape, int(arr.size))
    return summarize_array(arr, dtype, shape)


def decode_debug_value(mode: int, data: bytes | None, eager: bool = False) -> dict[str, Any]:
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


def _json_value(x, kind: str):
    if kind == "O":
        return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)
    if kind == "b":
        return bool(x)
    if kind == "c":
        return str(complex(x))
    if kind == "f":
        return float(x)
    return int(x)


def tensor_value(data: bytes | None, begin: int = 0, max_elements: int = 1000) -> dict[str, Any] | None:
    """wire.ts TensorValue of a FULL_TENSOR debug tensor, elements [begin, begin + max_elements)."""
    if data is None:
        return None
    proto = parse_tensor_proto(data)
    if proto is None or is_empty_proto(proto):
        return None
    try:
        arr, dtype, shape = tensor_to_numpy(proto)
    except Exception:  # noqa: BLE001
        return None
    size = int(arr.size)
    b = min(max(0, begin), size)
    e = min(size, b + max(0, max_elements))
    return value_dict(arr[b:e], dtype, shape, size, b)


def value_dict(part: np.ndarray, dtype: str, shape: list[int], size: int, begin: int) -> dict[str, Any]:
    """wire.ts TensorValue of the elements `part` (decoded), which start at flat element `begin`."""
    kind = part.dtype.kind
    items = part.tolist() if kind != "O" else list(part)
    end = begin + len(part)
    return {
        "dtype": dtype,
        "shape": shape,
        "size": size,
        "begin": begin,
        "end": end,
        "truncated": (end - begin) < size,
        "values": [_json_value(x, kind) for x in items],
    }


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
    m = health.get("mode")
    if m == "CURT_HEALTH":
        return (-1.0, -1.0, -1.0, -1.0) if health["any_inf_or_nan"] else None
    counted = m in ("CONCISE_HEALTH", "FULL_HEALTH")
    if counted and (health["neg_inf"] or health["pos_inf"] or health["nan"]):
        return (float(health["neg_inf"]), float(health["pos_inf"]), float(health["nan"]), float(health["size"]))
    return None

"""A TensorProto's stored values: the dtype table, parsing, conversion to numpy, and wire.ts `TensorValue` (a slice
of a FULL_TENSOR value's elements, as JSON values). Protobuf is imported only when a proto is parsed."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..wire import types as wire
from .full_tensor import string_content, widen_bfloat16

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


def dtype_name(enum_value: int) -> str:
    entry = DTYPES.get(int(enum_value))
    return entry[0] if entry else f"dtype_{int(enum_value)}"


def _tensor_proto_class() -> Any:  # protobuf classes carry no types
    from tensorboard.compat.proto import tensor_pb2

    return tensor_pb2.TensorProto


def parse_tensor_proto(data: bytes) -> Any:
    """TensorBoard's TensorProto from bytes, or None when it does not parse."""
    proto = _tensor_proto_class()()
    try:
        proto.ParseFromString(data)
    except Exception:  # noqa: BLE001
        return None
    return proto


def tensor_to_numpy(proto: Any, raw_bfloat16: bool = False) -> tuple[np.ndarray, str, list[int]]:
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


def is_empty_proto(proto: Any) -> bool:
    return proto.dtype == 0 and not proto.tensor_content and not proto.tensor_shape.dim


def _json_value(x: Any, kind: str) -> wire.Num | bool | str:
    if kind == "O":
        return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)
    if kind == "b":
        return bool(x)
    if kind == "c":
        return str(complex(x))
    if kind == "f":
        return float(x)
    return int(x)


def tensor_value(data: bytes | None, begin: int = 0, max_elements: int = 1000) -> wire.TensorValue | None:
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


def value_dict(part: np.ndarray, dtype: str, shape: list[int], size: int, begin: int) -> wire.TensorValue:
    """wire.ts TensorValue of the elements `part` (decoded), which start at flat element `begin`."""
    kind = part.dtype.kind
    items = part.tolist() if kind != "O" else list(part)
    end = begin + len(part)
    return {
        "dtype": dtype,
        "shape": [*shape],
        "size": size,
        "begin": begin,
        "end": end,
        "truncated": (end - begin) < size,
        "values": [_json_value(x, kind) for x in items],
    }

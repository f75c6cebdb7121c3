"""Debug tensors as TensorFlow's DebugNumericSummaryV2 / DebugIdentityV2 lay them out, and TensorProto bytes.

Layouts (float64 vectors; /work/shared/tfdbg2-format.md "Debug tensor per mode"):
CURT_HEALTH [id, any_inf_or_nan]; CONCISE_HEALTH [id, size, -inf, +inf, nan]; FULL_HEALTH [id, device(-1), dtype,
rank, size, -inf, +inf, nan, neg, zero, pos] (neg/zero/pos count finite values); SHAPE [id, dtype, rank, size, the
last six dims right-padded with 0]; NO_TENSOR an empty float32 tensor; FULL_TENSOR the tensor itself. Health modes
cover floating dtypes only (TensorFlow writes an empty TensorProto for other outputs of an eager op).

The counts come in as `HealthCounts` so that a framework can compute them where the tensor lives (the JAX writer
does it inside the compiled program) and hand over a few integers; `counts_of` computes them with numpy.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Sequence

import numpy as np

from ..reader.schema import MODE_NAMES
from ..reader.tensor_proto import DTYPES

# numpy dtype name -> TensorFlow DataType enum
DTYPE_ENUM: dict[str, int] = {
    "float32": 1,
    "float64": 2,
    "int32": 3,
    "uint8": 4,
    "int16": 5,
    "int8": 6,
    "complex64": 8,
    "int64": 9,
    "bool": 10,
    "bfloat16": 14,
    "uint16": 17,
    "complex128": 18,
    "float16": 19,
    "uint32": 22,
    "uint64": 23,
}
FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")
HEALTH_MODES = ("CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH")
MODES_WRITTEN = ("NO_TENSOR", "CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH", "SHAPE", "FULL_TENSOR")


@dataclasses.dataclass(frozen=True)
class HealthCounts:
    """What every health mode is made of: element counts of one tensor."""

    size: int
    neg_inf: int
    pos_inf: int
    nan: int
    neg: int  # finite values < 0
    zero: int
    pos: int  # finite values > 0


def counts_of(array: np.ndarray) -> HealthCounts:
    x = np.asarray(array)
    if x.dtype.name == "bfloat16":
        x = x.astype(np.float32)
    nan = np.isnan(x)
    pos_inf, neg_inf = np.isposinf(x), np.isneginf(x)
    finite = ~(nan | pos_inf | neg_inf)
    return HealthCounts(
        size=int(x.size),
        neg_inf=int(neg_inf.sum()),
        pos_inf=int(pos_inf.sum()),
        nan=int(nan.sum()),
        neg=int((finite & (x < 0)).sum()),
        zero=int((finite & (x == 0)).sum()),
        pos=int((finite & (x > 0)).sum()),
    )


def is_instrumented(mode: str, dtype_name: str) -> bool:
    """Whether TensorFlow writes a debug tensor for an output of this dtype in this mode."""
    if mode in HEALTH_MODES:
        return dtype_name in FLOAT_NAMES
    return dtype_name in DTYPE_ENUM


def debug_vector(
    mode: str, tensor_id: int, dtype_name: str, shape: Sequence[int], counts: HealthCounts | None
) -> np.ndarray:
    """The float64 debug vector of one tensor in a summary mode (not FULL_TENSOR)."""
    dtype = float(DTYPE_ENUM.get(dtype_name, 0))
    size = int(np.prod(shape)) if len(shape) else 1
    if mode == "NO_TENSOR":
        return np.zeros((0,), np.float32)  # TensorFlow marks "computed" with an empty float32 tensor
    if mode == "SHAPE":
        dims = [float(d) for d in list(shape)[-6:]]
        return np.array([tensor_id, dtype, len(shape), size] + dims + [0.0] * (6 - len(dims)), np.float64)
    if counts is None:
        raise ValueError(f"{mode} needs the tensor's health counts")
    c = counts
    if mode == "CURT_HEALTH":
        return np.array([tensor_id, 1.0 if (c.neg_inf or c.pos_inf or c.nan) else 0.0], np.float64)
    if mode == "CONCISE_HEALTH":
        return np.array([tensor_id, c.size, c.neg_inf, c.pos_inf, c.nan], np.float64)
    if mode == "FULL_HEALTH":
        return np.array(
            [tensor_id, -1, dtype, len(shape), c.size, c.neg_inf, c.pos_inf, c.nan, c.neg, c.zero, c.pos], np.float64
        )
    raise ValueError(f"no debug vector for mode {mode}")


def mode_number(mode: str) -> int:
    if mode not in MODES_WRITTEN:
        raise ValueError(f"tensor_debug_mode must be one of {', '.join(MODES_WRITTEN)}, not {mode!r}")
    return next(number for number, name in MODE_NAMES.items() if name == mode)


# --- TensorProto encoding (tensorflow/core/framework/tensor.proto), by hand: no TensorFlow, no extra schema ---


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def length_delimited(number: int, payload: bytes) -> bytes:  # a length-delimited field
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def _shape(shape: Sequence[int]) -> bytes:
    dims = b"".join(length_delimited(2, (varint(1 << 3) + varint(int(d))) if d else b"") for d in shape)
    return length_delimited(2, dims)


_TYPED_SCALAR = {  # TensorProto field of a scalar's value, and how its value is packed
    "float_val": (5, lambda v: struct.pack("<f", float(v))),
    "double_val": (6, lambda v: struct.pack("<d", float(v))),
    "int_val": (7, lambda v: varint(int(v))),
    "int64_val": (10, lambda v: varint(int(v))),
    "bool_val": (11, lambda v: varint(int(bool(v)))),
    "half_val": (13, lambda v: varint(int(v))),
    "uint32_val": (16, lambda v: varint(int(v))),
    "uint64_val": (17, lambda v: varint(int(v))),
}


def tensor_proto(array: np.ndarray, typed_scalar: bool = False) -> bytes:
    """A serialized TensorProto of `array`: raw little-endian `tensor_content`; with `typed_scalar`, a scalar in its
    typed field (packed). TensorFlow's graph traces always hold `tensor_content`, its eager FULL_TENSOR executions
    hold scalars in the typed field."""
    x = np.asarray(array)
    name = x.dtype.name
    if name not in DTYPE_ENUM:
        raise ValueError(f"no TensorFlow dtype for {name}")
    enum = DTYPE_ENUM[name]
    head = varint(1 << 3) + varint(enum) + _shape(x.shape)
    typed = DTYPES[enum][2]
    if typed_scalar and x.ndim == 0 and typed in _TYPED_SCALAR:
        number, pack = _TYPED_SCALAR[typed]
        value = x.view(np.uint16) if name in ("float16", "bfloat16") else x
        return head + length_delimited(number, pack(value.item()))
    if x.size == 0:
        return head
    little = x.astype(x.dtype.newbyteorder("<")) if x.dtype.byteorder == ">" else x
    return head + length_delimited(4, np.ascontiguousarray(little).tobytes())


def empty_proto() -> bytes:
    """The empty TensorProto TensorFlow writes for an eager output its mode does not cover."""
    return b""

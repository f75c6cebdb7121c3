"""Known tensors in FULL_TENSOR mode, for the Tensor Values view: every dtype TensorFlow dumps, 0-d to 4-d, NaN and
±∞ at known places, in a tf.function (graph traces) and eagerly (executions). Args: DUMP_DIR.

`expected()` gives the arrays (the tests import it: no TensorFlow needed there). In the graph each array passes
through `IdentityN` named "v_<name>"; eagerly each goes through one `IdentityN` execution, in `NAMES` order. Then
`log(x)` of LOG_INPUT (op "shifted") makes -inf at (1, 2) and NaN at (2, 3) (graph op "culprit"), and eagerly
`sqrt` of [-1, 4] (a Sub execution) makes NaN at [0].
"""

import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

NAMES = (
    "f32_4d",
    "f64_2d",
    "f16_3d",
    "bf16_2d",
    "f32_0d",
    "i8_1d",
    "i16_2d",
    "i32_3d",
    "i64_1d",
    "u8_2d",
    "u16_1d",
    "u32_1d",
    "u64_1d",
    "bool_2d",
    "c64_1d",
    "c128_2d",
    "str_1d",
    "i32_0d",
)
LOG_INPUT = np.array([[1, 2, 3, 4], [5, 6, 0, 8], [9, 10, 11, -1]], np.float32)


def _floats(rng, shape, dtype):
    return rng.normal(size=shape).astype(dtype)


def expected() -> dict:
    """name -> the numpy array the program dumps (bfloat16 as its raw 16-bit words, uint16)."""
    rng = np.random.default_rng(16)
    out = {}
    f32 = _floats(rng, (2, 3, 4, 5), np.float32)
    f32[0, 1, 2, 3] = np.nan
    f32[1, 2, 3, 4] = np.inf
    f32[1, 0, 0, 0] = -np.inf
    f32[0, 0, 0, 1] = 0.0
    out["f32_4d"] = f32
    f64 = _floats(rng, (6, 7), np.float64)
    f64[5, 6] = np.nan
    out["f64_2d"] = f64
    f16 = _floats(rng, (3, 4, 5), np.float16)
    f16[2, 3, 4] = np.inf
    out["f16_3d"] = f16
    bf = (_floats(rng, (4, 6), np.float32).view(np.uint32) >> 16).astype(np.uint16)
    bf[3, 5] = 0x7FC0  # bfloat16 NaN
    out["bf16_2d"] = bf
    out["f32_0d"] = np.array(np.nan, np.float32)
    for name, dtype, shape in (
        ("i8_1d", np.int8, (9,)),
        ("i16_2d", np.int16, (3, 5)),
        ("i32_3d", np.int32, (2, 3, 4)),
        ("i64_1d", np.int64, (10,)),
        ("u8_2d", np.uint8, (4, 4)),
        ("u16_1d", np.uint16, (7,)),
        ("u32_1d", np.uint32, (6,)),
        ("u64_1d", np.uint64, (5,)),
    ):
        info = np.iinfo(dtype)
        out[name] = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    out["bool_2d"] = rng.random((3, 4)) > 0.5
    out["c64_1d"] = (rng.normal(size=5) + 1j * rng.normal(size=5)).astype(np.complex64)
    c128 = (rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))).astype(np.complex128)
    c128[1, 1] = complex(np.nan, 1.0)
    out["c128_2d"] = c128
    out["str_1d"] = np.array([b"alpha", b"", "\u00e9t\u00e9".encode(), b"omega"], dtype=object)
    out["i32_0d"] = np.array(-7, np.int32)
    return out


def _tf_value(tf, name, arr):
    if name.startswith("bf16"):
        return tf.bitcast(tf.constant(arr, tf.uint16), tf.bfloat16)
    if arr.dtype == object:
        return tf.constant(list(arr), tf.string)
    return tf.constant(arr)


def main(dump_dir: str) -> None:
    import tensorflow as tf

    arrays = expected()
    values = [_tf_value(tf, n, arrays[n]) for n in NAMES]  # before dumping: the bfloat16 Bitcast is not recorded
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode="FULL_TENSOR", circular_buffer_size=-1)

    @tf.function
    def graph(log_input, *xs):
        # IdentityN, not tf.identity: TF's dump callback skips Identity ops
        shown = [tf.raw_ops.IdentityN(input=[x], name=f"v_{name}") for name, x in zip(NAMES, xs)]
        shifted = tf.subtract(log_input, 1.0, name="shifted")  # LOG_INPUT, traced (function inputs are not)
        return tf.math.log(shifted, name="culprit"), shown  # CULPRIT

    graph(tf.constant(LOG_INPUT + 1), *values)
    for x in values:
        tf.raw_ops.IdentityN(input=[x])
    tf.math.sqrt(tf.subtract(tf.constant([0.0, 5.0]), 1.0))  # sqrt([-1, 4])
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1])

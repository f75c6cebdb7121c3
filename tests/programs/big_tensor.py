"""FULL_TENSOR traces of tensors big enough to be streamed when tests lower reader/big_record.THRESHOLD: float32,
float64, float16 and bfloat16 vectors of ~1 MiB with NaN / ±∞ at known places (at the very end, at either side of
where tests put a piece boundary, none at all), each through a graph `IdentityN` named "v_<name>", with a small op
after them, in a tf.function run STEPS times (big records back to back, small ones between). Args: DUMP_DIR.

`expected()` gives the arrays (bfloat16 as its raw 16-bit words); the tests import it (no TensorFlow needed there).
"""

import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

ELEMENTS = 1 << 18  # 1 MiB of float32
EDGE = 16384  # tests put a piece boundary after this many float32 elements (64 KiB)
STEPS = 2
NAMES = ("late_nan", "edge_inf", "clean", "f64_nan", "f64_clean", "f16_clean", "bf16_neginf")


def expected() -> dict:
    rng = np.random.default_rng(25)
    out = {}
    x = rng.normal(size=ELEMENTS).astype(np.float32)
    x[-1] = np.nan  # the last element: found only if every piece is looked at
    out["late_nan"] = x
    x = rng.normal(size=ELEMENTS).astype(np.float32)
    x[5 * EDGE - 1] = np.inf  # the last element before a piece boundary ...
    x[5 * EDGE] = -np.inf  # ... and the first after it
    out["edge_inf"] = x
    out["clean"] = rng.normal(size=ELEMENTS).astype(np.float32)
    x = rng.normal(size=ELEMENTS // 2 + 3).astype(np.float64)  # a ragged last piece
    x[EDGE // 2] = np.nan  # the first element of the second 64 KiB: it would straddle a piece of 64 KiB + 4
    out["f64_nan"] = x
    out["f64_clean"] = rng.normal(size=ELEMENTS // 2 + 1).astype(np.float64)  # misread elements would show here
    out["f16_clean"] = rng.normal(size=ELEMENTS * 2).astype(np.float16)
    bf = (rng.normal(size=ELEMENTS * 2).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    bf[7 * EDGE + 1] = 0xFF80  # bfloat16 -inf
    out["bf16_neginf"] = bf
    return out


def main(dump_dir: str) -> None:
    import tensorflow as tf

    arrays = expected()
    values = [
        tf.bitcast(tf.constant(arrays[n], tf.uint16), tf.bfloat16) if n.startswith("bf16") else tf.constant(arrays[n])
        for n in NAMES
    ]  # before dumping: the bfloat16 Bitcast is not recorded
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode="FULL_TENSOR", circular_buffer_size=-1)

    @tf.function
    def graph(*xs):
        # IdentityN, not tf.identity: TF's dump callback skips Identity ops
        shown = [tf.raw_ops.IdentityN(input=[x], name=f"v_{name}") for name, x in zip(NAMES, xs)]
        small = tf.add(xs[2][:4], 1.0, name="small")
        return shown, small

    for _ in range(STEPS):
        graph(*values)
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1])

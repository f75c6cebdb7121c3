"""numpy basic slicing of a tensor that stays on disk: parse a slice string, check it against the shape, read only
the selected elements (reader/tensor_content.read_elements).

Grammar (what numpy's basic indexing takes, minus `None`/newaxis): items separated by commas, each an integer
(negative counts from the end; it removes the axis), `start:stop[:step]` with any part left out (step non-zero,
negative allowed), or one `...` standing for as many `:` as needed. Fewer items than axes: the rest are `:`. The
empty string selects everything. At most MAX_SLICE_ELEMENTS elements per answer.
"""

from __future__ import annotations

import re

import numpy as np

from tensorboard_plugin_dbg.reader import tensor_content

MAX_SLICE_ELEMENTS = 1 << 16  # 65,536 elements per answer: a 256 x 256 window, ~1 MB of JSON
_INT = r"\s*-?[0-9]{1,19}\s*"
_ITEM = re.compile(
    rf"\s*(?:(?P<int>{_INT})|(?P<start>{_INT})?:(?P<stop>{_INT})?(?::(?P<step>{_INT})?)?|(?P<ell>\.\.\.))\s*"
)


class SliceError(ValueError):
    """A slice that does not fit the tensor; `too_large` when it selects more than MAX_SLICE_ELEMENTS."""

    def __init__(self, message: str, too_large: bool = False):
        super().__init__(message)
        self.too_large = too_large


Index = int | slice


def parse(spec: str, shape: tuple[int, ...]) -> list[Index]:
    """One int or slice per axis of `shape` (the ellipsis expanded, missing axes filled with `:`), every int
    checked against its axis. Raises SliceError."""
    items = [] if spec.strip() == "" else spec.split(",")
    if len(items) > 64:
        raise SliceError(f"the slice has {len(items)} items; this tensor has {len(shape)} axes")
    parsed: list[Index | None] = []
    for text in items:
        m = _ITEM.fullmatch(text)
        if m is None:
            raise SliceError(f"cannot read {text.strip()[:40]!r}: use an integer, start:stop:step or ...")
        if m["ell"]:
            if None in parsed:
                raise SliceError("the slice has more than one ...")
            parsed.append(None)
        elif m["int"] is not None:
            parsed.append(int(m["int"]))
        else:
            step = None if m["step"] is None else int(m["step"])
            if step == 0:
                raise SliceError("a slice step cannot be 0")
            start, stop = (None if g is None else int(g) for g in (m["start"], m["stop"]))
            parsed.append(slice(start, stop, step))
    fixed = [p for p in parsed if p is not None]
    if len(fixed) > len(shape):
        raise SliceError(f"the slice has {len(fixed)} items; the tensor has {len(shape)} axes (shape {list(shape)})")
    at = parsed.index(None) if None in parsed else len(parsed)
    full: list[Index] = [*fixed[:at], *([slice(None)] * (len(shape) - len(fixed))), *fixed[at:]]
    for axis, (item, dim) in enumerate(zip(full, shape)):
        if isinstance(item, int) and not -dim <= item < dim:
            raise SliceError(f"index {item} is out of range for axis {axis} of size {dim}")
    return full


def normalized(items: list[Index]) -> str:
    """The slice as a string numpy would take (each item explicit)."""

    def one(item: Index) -> str:
        if isinstance(item, int):
            return str(item)
        parts = ["" if v is None else str(v) for v in (item.start, item.stop)]
        return ":".join(parts) + ("" if item.step is None else f":{item.step}")

    return ",".join(one(i) for i in items)


def selection(items: list[Index], shape: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, ...]]:
    """(flat C-order positions of the selected elements, the result's shape), the positions in the order numpy's
    `x[items]` lists them. Raises SliceError past MAX_SLICE_ELEMENTS (checked before anything is allocated)."""
    ranges = [range(dim)[item] if isinstance(item, slice) else item % dim for item, dim in zip(items, shape)]
    out_shape = tuple(len(r) for r in ranges if isinstance(r, range))
    count = 1
    for n in out_shape:
        count *= n
    if count > MAX_SLICE_ELEMENTS:
        raise SliceError(
            f"the slice selects {count:,} elements; the cap is {MAX_SLICE_ELEMENTS:,} per request "
            "(take a smaller window)",
            too_large=True,
        )
    strides = np.ones(len(shape), np.int64)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    flat = np.zeros((1,) * len(out_shape), np.int64)
    dim_at = 0
    for k, r in enumerate(ranges):
        if isinstance(r, range):
            axis = np.arange(r.start, r.stop, r.step, dtype=np.int64) * strides[k]
            view = [1] * len(out_shape)
            view[dim_at] = len(r)
            flat = flat + axis.reshape(view)
            dim_at += 1
        else:
            flat = flat + int(r) * int(strides[k])
    return flat.reshape(-1) if count else np.zeros(0, np.int64), out_shape


def read(loc: tensor_content.TensorLocation, spec: str) -> tuple[str, tuple[int, ...], np.ndarray]:
    """(normalized spec, result shape, flat stored values in C order of the result)."""
    items = parse(spec, loc.shape)
    flat, out_shape = selection(items, loc.shape)
    return normalized(items), out_shape, tensor_content.read_elements(loc, flat)

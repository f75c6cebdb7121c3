"""A capsule's batch per sample, one table per batch array (route `capsule_samples`: x rows and y rows never mixed):
for each sample its non-finite count, its min and max |x| over its finite values, its negatives and zeros (finite),
ordered the rows the replay's root cause points at first, then the bad ones, then by max |x|. Paged: the columns are
numpy over the whole array (a batch of 100 k samples is 5 columns of 100 k numbers), Python objects only for the page.

"Pointed at": once the capsule is replayed and its root cause reads this array of the batch (analysis/capsule_inputs.py
`pointed_rows`: the NaN came with the batch, or a finite value outside the producer's domain, a negative into Log),
the samples holding such an element; before a replay, none."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorboard_plugin_dbg.analysis import capsule_inputs
from tensorboard_plugin_dbg.analysis.capsule_array import capsule_folder
from tensorboard_plugin_dbg.index.protocol import NotFound
from tensorboard_plugin_dbg.reader import capsule_arrays, capsule_files, tensor_content
from tensorboard_plugin_dbg.wire import types as wire


def columns(values: np.ndarray) -> dict[str, np.ndarray]:
    """Per sample (first axis): nonfinite, min and max_abs over the finite values (NaN where it has none),
    negatives and zeros among the finite values."""
    a = np.asarray(values)
    rows = (a.reshape(1) if a.ndim == 0 else a).reshape(max(1, a.shape[0]) if a.ndim else 1, -1)
    if not np.issubdtype(rows.dtype, np.number) and rows.dtype != np.bool_:
        rows = np.zeros((len(rows), 0))
    rows = rows.astype(np.float64) if rows.dtype.kind in "biu" else rows
    finite = np.isfinite(rows)
    has = finite.any(axis=1)
    with np.errstate(invalid="ignore"):
        low = np.where(has, np.where(finite, rows, np.inf).min(axis=1, initial=np.inf), np.nan)
        peak = np.where(has, np.abs(np.where(finite, rows, 0)).max(axis=1, initial=0), np.nan)
    return {
        "nonfinite": rows.shape[1] - np.count_nonzero(finite, axis=1),
        "min": low.astype(np.float64),
        "max_abs": peak.astype(np.float64),
        "negatives": np.count_nonzero(finite & (rows < 0), axis=1),
        "zeros": np.count_nonzero(rows == 0, axis=1),
    }


def page(
    logdir: str, capsule: str, array: str, begin: int, end: int, producer: wire.RootCauseProducer | None
) -> wire.CapsuleSamplesResponse:
    """wire.ts CapsuleSamplesResponse: rows begin..end of the array's table. `producer`: the replay's root cause
    (None before a replay). Raises NotFound for an unknown capsule or array, or a damaged file."""
    folder = capsule_folder(logdir, capsule)
    try:
        loc, manifest = capsule_arrays.locate(folder, "batch", array)
        names = list(capsule_arrays.locate_group(folder, manifest, "batch"))
        values = capsule_arrays.read_whole(loc)
    except capsule_arrays.ArrayNotFound as e:
        raise NotFound(str(e)) from None
    except (capsule_files.CapsuleError, tensor_content.ContentError, OSError) as e:
        raise NotFound(f"capsule {capsule!r}: batch array {array!r} cannot be read: {e}") from None
    cols = columns(values)
    total = len(cols["nonfinite"])
    pointed, why = capsule_inputs.pointed_rows(producer, array, values) if producer else (None, None)
    marked = pointed if pointed is not None and len(pointed) == total else np.zeros(total, bool)
    order = np.lexsort((np.arange(total), -np.nan_to_num(cols["max_abs"], nan=-1.0), -cols["nonfinite"], ~marked))
    begin, end = min(begin, total), min(end, total)
    rows: list[wire.CapsuleSampleRow] = [
        {
            "sample": int(i),
            "nonfinite": int(cols["nonfinite"][i]),
            "min": _finite_or_none(cols["min"][i]),
            "max_abs": _finite_or_none(cols["max_abs"][i]),
            "negatives": int(cols["negatives"][i]),
            "zeros": int(cols["zeros"][i]),
            "marked": bool(marked[i]),
        }
        for i in order[begin:end].tolist()
    ]
    return {
        "capsule": capsule,
        "array": array,
        "arrays": names,
        "total": total,
        "begin": begin,
        "end": end,
        "marked": int(marked.sum()),
        "marked_by": why,
        "rows": rows,
    }


def _finite_or_none(value: Any) -> float | None:
    return float(value) if np.isfinite(value) else None

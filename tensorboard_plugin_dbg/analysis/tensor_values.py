"""The Tensor Values view's answers: one tensor (wire.ts TensorResponse), and the values feeding an op's inputs
(wire.ts TensorInputsResponse).

A FULL_TENSOR value is read from the dump by offset (the index locates it, reader/tensor_content reads it): a slice
reads only its elements (tensor_slices.py); the whole-tensor stats, histogram and non-finite positions are computed
once per tensor and bin count (tensor_stats.py) and kept in the run's derived cache (index/derived.py). Other modes
answer what they carry (their health: shape, counts) and say how to record values.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, TypedDict, cast

import numpy.typing as npt

from tensorboard_plugin_dbg.analysis import root_cause, tensor_slices, tensor_stats
from tensorboard_plugin_dbg.analysis.health import describe
from tensorboard_plugin_dbg.index.protocol import NotFound, RecordGone, RunQueries, TensorRecord
from tensorboard_plugin_dbg.index.tensor_queries import Source
from tensorboard_plugin_dbg.reader import debug_values, tensor_content
from tensorboard_plugin_dbg.wire import types as wire

VALUES_NOTE = (
    'Values need tensor_debug_mode="FULL_TENSOR" (with op_regex=... to limit the dump\'s size: it matches op types).'
)


@contextlib.contextmanager
def _readable() -> Iterator[None]:
    """A value whose bytes are gone (the file shrank or changed after indexing) is a RecordGone (404), as for
    every other record read back."""
    try:
        yield
    except tensor_content.ContentError as exc:
        raise RecordGone(f"the tensor's values can no longer be read: {exc}") from exc
    except OSError as exc:
        raise RecordGone(f"the tensor's values can no longer be read: {exc.strerror or exc}") from exc


readable = _readable  # compare/values.py reads values back under the same rule


class _NoValues(TypedDict, total=False):
    """What a tensor without values says instead (_without_values)."""

    dtype: str | None
    shape: list[float] | None
    size: float | None
    note: str | None


def tensor(
    run: RunQueries, source: Source, index: int, output: int | None, spec: str | None, bins: int
) -> wire.TensorResponseBody:
    """wire.ts TensorResponse minus `run`. Raises tensor_slices.SliceError for a slice that does not fit."""
    record = run.tensor_record(source, index, output)
    out: wire.TensorResponseBody = {
        "tensor": record.describe(),
        "dtype": None,
        "shape": None,
        "size": None,
        "has_values": False,
        "note": None,
        "health": record.health,
        "stats": None,
        "histogram": None,
        "nonfinite": None,
        "slice": None,
    }
    loc = record.location
    if loc is None:
        out.update(_without_values(record))
        return out
    out["dtype"], out["shape"], out["size"], out["has_values"] = loc.dtype, list(loc.shape), loc.size, True
    if loc.dtype == "bfloat16":
        out["note"] = "bfloat16: values shown widened to float32 (exact); the .npy holds the raw 16-bit words (<u2)."
    with _readable():
        if spec is not None:  # a bad slice fails before the whole-tensor pass
            out["slice"] = slice_values(loc, spec)
        whole = summary(run, record, bins)
        out["stats"], out["histogram"], out["nonfinite"] = whole["stats"], whole["histogram"], whole["nonfinite"]
    return out


def _without_values(record: TensorRecord) -> _NoValues:
    health = record.health
    if record.mode == "FULL_TENSOR":
        return {"note": f"No values: {record.reason or 'the record holds no tensor'}."}
    shape = health["shape"] if health and health["mode"] == "SHAPE" and not health["shape_truncated"] else None
    # dtype and size where the health mode records them (a count or a name; absent: None)
    dtype, size = (health.get("dtype"), health.get("size")) if health else (None, None)
    return {
        "dtype": cast("str | None", dtype),
        "shape": shape,
        "size": cast("float | None", size),
        "note": f"This tensor was dumped in {record.mode} mode, which records no values. {VALUES_NOTE}",
    }


def summary(run: RunQueries, record: TensorRecord, bins: int) -> tensor_stats.Summary:
    """stats, histogram and nonfinite of a located tensor, computed once per (tensor, bins) (tensor_stats.cached)."""
    return tensor_stats.cached(run, record, bins)


def slice_values(loc: tensor_content.TensorLocation, spec: str) -> wire.TensorSlice:
    """wire.ts TensorSlice of `spec` (tensor_slices grammar)."""
    normalized, shape, raw = tensor_slices.read(loc, spec)
    return {"spec": normalized, "shape": list(shape), "values": json_values(raw, loc.dtype)}


def json_values(raw: npt.NDArray[Any], dtype: str) -> list[wire.Num | bool | str]:
    """Stored elements as JSON values: numbers (the encoder spells NaN/±inf), booleans, complex and strings as
    text. No per-element work beyond tolist() for numeric dtypes."""
    values = debug_values.content_values(raw, dtype)
    kind = values.dtype.kind
    if kind in "fiub":
        return values.tolist()
    if kind == "c":
        return [str(complex(x)) for x in values.tolist()]
    return [x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x) for x in values.tolist()]


def npy_stream(loc: tensor_content.TensorLocation) -> Iterator[bytes]:
    """The .npy bytes (reader/tensor_content.npy_chunks); a file cut short mid-stream ends the stream early."""
    with _readable():
        yield from tensor_content.npy_chunks(loc)


def npy(run: RunQueries, source: Source, index: int, output: int | None) -> tuple[tensor_content.TensorLocation, str]:
    """(location, file name) of a tensor's .npy; NotFound when it has no values."""
    record = run.tensor_record(source, index, output)
    if record.location is None:
        raise NotFound(
            record.reason or f"{source} {index} output {record.output} holds no values ({record.mode}). {VALUES_NOTE}"
        )
    name = (record.op_name or record.op_type or "tensor").replace("/", "_")
    suffix = f".{record.location.dtype}" if record.location.dtype == "bfloat16" else ""
    return record.location, f"{source}{index}_{name}_{record.output}{suffix}.npy"


def inputs(run: RunQueries, source: Source, index: int) -> wire.TensorInputsResponseBody:
    """wire.ts TensorInputsResponse minus `run`: the tensor, and for each data input of its op the latest recorded
    value before it ran (graph: the input's trace; eager: the execution that output it), or why there is none."""
    record = run.tensor_record(source, index, None)
    entries: list[wire.TensorInput] = []
    for found in root_cause.input_sources(run, "graph_execution" if source == "graph" else "execution", index):
        ref = None
        if found["index"] is not None:
            src: Source = "graph" if found["source"] == "graph_execution" else "eager"
            output = found["output"]
            ref = run.tensor_record(src, found["index"], None if output is None else int(output)).describe()
        health = found.get("health")
        entries.append(
            {
                "slot": found["slot"],
                "name": found["name"],
                "tensor": ref,
                "description": found["description"] if ref is None else f"{found['name']} — {describe(health)}",
            }
        )
    return {"tensor": record.describe(), "inputs": entries}

"""One debug tensor: its summary and a slice of values, the same as a .npy file, and the op's inputs' tensors."""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis import tensor_slices, tensor_stats, tensor_values
from tensorboard_plugin_dbg.api import errors
from tensorboard_plugin_dbg.api.params import Param, Params
from tensorboard_plugin_dbg.api.routes.shared import RUN
from tensorboard_plugin_dbg.api.spec import Binary, RouteSpec
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.index.tensor_queries import SOURCES
from tensorboard_plugin_dbg.reader import tensor_content
from tensorboard_plugin_dbg.wire import types as wire

NPY = "application/octet-stream"

SOURCE = Param("source", "enum", "graph: a graph execution trace; eager: an execution.", required=True, choices=SOURCES)
OUTPUT = Param("output", "int", "Output slot (eager: default 0; graph: the trace's own slot, default it).")
TENSOR = (RUN, SOURCE, Param("index", "int", "graph_executions or executions index.", required=True), OUTPUT)


def tensor(run: RunQueries, p: Params) -> wire.TensorResponse:
    try:
        answer = tensor_values.tensor(run, p["source"], p["index"], p["output"], p["slice"], p["bins"])
    except tensor_slices.SliceError as exc:
        raise errors.ApiError(errors.PAGE_TOO_LARGE if exc.too_large else errors.BAD_PARAMETER, str(exc)) from exc
    return {"run": run.name, **answer}


def tensor_npy(run: RunQueries, p: Params) -> Binary:
    loc, filename = tensor_values.npy(run, p["source"], p["index"], p["output"])
    return Binary(
        tensor_values.npy_stream(loc),
        tensor_content.npy_bytes(loc),
        filename,
        NPY,
        {"X-Dbg-Dtype": loc.dtype},
    )


def tensor_inputs(run: RunQueries, p: Params) -> wire.TensorInputsResponse:
    return {"run": run.name, **tensor_values.inputs(run, p["source"], p["index"])}


ROUTES: tuple[RouteSpec, ...] = (
    RouteSpec(
        "tensor",
        "One debug tensor: dtype, shape, whole-tensor stats, histogram, non-finite positions, and a slice of values "
        "(FULL_TENSOR; other modes: what they carry, and how to record values).",
        (
            *TENSOR,
            Param(
                "slice",
                "str",
                "numpy basic slice, e.g. `3,:,0:8`, `-1,...`, `::-2` (ints, negative ints, start:stop:step, one "
                f"`...`); at most {tensor_slices.MAX_SLICE_ELEMENTS} elements (else 400 page_too_large). "
                "Absent: no values, the summary only; empty: not allowed (give `...` for everything).",
            ),
            Param(
                "bins",
                "int",
                "Histogram bins.",
                default=tensor_stats.DEFAULT_BINS,
                minimum=1,
                maximum=tensor_stats.MAX_BINS,
            ),
        ),
        tensor,
        "TensorResponse",
    ),
    RouteSpec(
        "tensor.npy",
        "A FULL_TENSOR value as a .npy file, bit-exact in its stored dtype (bfloat16: its raw 16-bit words, "
        "dtype <u2; the X-Dbg-Dtype header and the file name say bfloat16; strings: fixed-width bytes |S<n>).",
        TENSOR,
        tensor_npy,
        None,
        content_type=NPY,
    ),
    RouteSpec(
        "tensor_inputs",
        "The op's data inputs of a tensor, each with the latest recorded tensor of it before the op ran.",
        TENSOR[:3],
        tensor_inputs,
        "TensorInputsResponse",
    ),
)

"""One tensor of run B beside its aligned counterpart in baseline A, and A − B over a slice (issue #27):
`compare_values?b=RUN&a=BASE&source&index&output&slice`. A's tensor is found by the comparison's alignment (the
comparison `compare` keeps per pair, at the tolerances the client passes as `compare` takes them); a tensor only
B holds answers B alone
(`status` only_in_b). Unknown runs and runs that cannot be compared are a 400 as in `compare`; an unknown B tensor
a 404; a slice that does not fit B's tensor a 400."""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis import tensor_slices, tensor_stats
from tensorboard_plugin_dbg.analysis.compare import comparison, values
from tensorboard_plugin_dbg.api import errors
from tensorboard_plugin_dbg.api.params import Param, Params
from tensorboard_plugin_dbg.api.routes import compare
from tensorboard_plugin_dbg.api.routes.tensors import SOURCE
from tensorboard_plugin_dbg.api.spec import RouteSpec
from tensorboard_plugin_dbg.index.protocol import Catalog
from tensorboard_plugin_dbg.wire import types as wire

BINS = 16  # each side's histogram: the compare view draws none, the `tensor` route's answer carries one


def compare_values(catalog: Catalog, p: Params) -> wire.CompareValuesResponse:
    run_b, run_a = compare.run_named(catalog, p["b"], "b"), compare.run_named(catalog, p["a"], "a")
    try:
        result = compare.comparison_of(run_a, run_b, compare.tolerances_of(p))
    except comparison.CompareError as e:
        raise errors.bad_parameter(f"{e.code}: {e.message}") from e
    try:
        answer = values.compare_values(result, p["source"], p["index"], p["output"], p["slice"], BINS)
    except tensor_slices.SliceError as exc:
        raise errors.ApiError(errors.PAGE_TOO_LARGE if exc.too_large else errors.BAD_PARAMETER, str(exc)) from exc
    return {"run": run_b.name, **answer}


ROUTES: tuple[RouteSpec, ...] = (
    RouteSpec(
        "compare_values",
        "A tensor of run B, its aligned counterpart in baseline run A (by the comparison's alignment) and A − B "
        "over a slice: FULL_TENSOR element by element with the largest |A − B| and where it is; health modes and "
        "SHAPE the counts of both and their difference. A tensor only B holds answers B alone (status only_in_b).",
        (
            *compare.PAIR,
            *compare.TOLERANCES,
            SOURCE,
            Param("index", "int", "Run B's graph_executions or executions index.", required=True),
            Param("output", "int", "Output slot (eager: default 0; graph: the trace's own slot, default it)."),
            Param(
                "slice",
                "str",
                "numpy basic slice of B's tensor, as the `tensor` route takes it, applied to A and A − B too; "
                f"at most {tensor_slices.MAX_SLICE_ELEMENTS} elements. Absent: no values, the summaries only.",
            ),
        ),
        compare_values,
        "CompareValuesResponse",
        not_found="unknown tensor of run B (source, index, output)",
    ),
)

assert tensor_stats.DEFAULT_BINS >= BINS

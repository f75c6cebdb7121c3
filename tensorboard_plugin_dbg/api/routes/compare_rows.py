"""Run B's own views with a comparison on (#27): `compare_rows` is Graph Execution's list of B's traces with each
row's difference from A (and "divergent only": the rows that differ, paged like any filter); `compare_traces` the
differences of a few given traces (Graph Structure's drawn nodes). Both reuse the comparison `compare` caches (same
runs, versions and tolerances) and read only the rows they answer for."""

from __future__ import annotations

from typing import cast

import numpy as np

from tensorboard_plugin_dbg.analysis.compare import comparison, rows
from tensorboard_plugin_dbg.api import errors
from tensorboard_plugin_dbg.api.params import PAGE_CAP, Param, Params
from tensorboard_plugin_dbg.api.routes import compare as compare_route
from tensorboard_plugin_dbg.api.routes import lists
from tensorboard_plugin_dbg.api.routes.shared import BEGIN, END, clamped
from tensorboard_plugin_dbg.api.spec import RouteSpec
from tensorboard_plugin_dbg.index.protocol import Catalog, NotFound, RunQueries
from tensorboard_plugin_dbg.wire import types as wire

_PAIR = compare_route.PAIR
_TOLERANCES = compare_route.TOLERANCES
_GE_ROUTE = next(r for r in lists.ROUTES if r.name == "graph_executions")
_FILTERS = _GE_ROUTE.params_named("op_type", "op_name", "graph_id", "only_nonfinite", "device", "host", "call")


def _compared(catalog: Catalog, p: Params) -> tuple[RunQueries, RunQueries, comparison.Comparison]:
    run_b, run_a = compare_route.run_named(catalog, p["b"], "b"), compare_route.run_named(catalog, p["a"], "a")
    tol = compare_route.tolerances_of(p)
    try:
        return run_b, run_a, compare_route.comparison_of(run_a, run_b, tol)
    except comparison.CompareError as e:
        raise errors.bad_parameter(f"{e.code}: {e.message}") from e


def _divergent_rows(run_a: RunQueries, run_b: RunQueries, c: comparison.Comparison) -> np.ndarray:
    """B's differing rows, kept beside the comparison (same key): a page then costs its rows, not a pass."""
    key = (id(run_a), run_a.version, run_b.version, c.tol)
    return run_b.derived.get(("compare_divergent_rows", run_a.name), key, lambda: rows.divergent_rows(c))


def compare_rows(catalog: Catalog, p: Params) -> wire.CompareRowsResponse:
    run_b, run_a, c = _compared(catalog, p)
    filters = lists.trace_filter(p)
    within = _divergent_rows(run_a, run_b, c) if p["divergent_only"] else None
    try:
        page = clamped(run_b.graph_executions(p["begin"], p["end"], filters, call=p["call"], within=within))
    except NotFound as e:  # `call` names an eager op, or no execution: a bad parameter here (the runs are a and b)
        raise errors.bad_parameter(f"call: {e}") from None
    shown = np.array([row["index"] for row in page["rows"]], np.int64)
    return {"run": run_b.name, "base": run_a.name, **page, "differences": rows.differences(c, shown)}


def compare_traces(catalog: Catalog, p: Params) -> wire.CompareTracesResponse:
    run_b, run_a, c = _compared(catalog, p)
    indices = [_trace_index(item, len(c.keys_b.key)) for item in p["indices"]]
    return {
        "run": run_b.name,
        "base": run_a.name,
        "indices": cast(list[float], indices),  # ints: wire.ts `number`
        "differences": rows.differences(c, np.array(indices, np.int64)),
    }


def _trace_index(item: str, traces: int) -> int:
    if not item.isdigit() or int(item) >= traces:
        raise errors.bad_parameter(f"indices: {item[:40]!r} is not a graph_executions index of run b (0..{traces - 1})")
    return int(item)


ROUTES: tuple[RouteSpec, ...] = (
    RouteSpec(
        "compare_rows",
        "Run B's graph execution traces [begin, end) under the filters (as `graph_executions` lists them), each with "
        "its difference from run A; `divergent_only`: only the traces that differ beyond tolerance or that run A lacks "
        "(only in B). 400 when the "
        "runs cannot be compared (as `compare`).",
        (
            *_PAIR,
            BEGIN,
            END,
            *_FILTERS,
            Param("divergent_only", "bool", "Only the traces that differ from run A.", default=False),
            *_TOLERANCES,
        ),
        compare_rows,
        "CompareRowsResponse",
        paged=True,
    ),
    RouteSpec(
        "compare_traces",
        "The differences from run A of the given graph traces of run B (e.g. a drawn neighbourhood's nodes), in the "
        "order given. 400 when the runs cannot be compared (as `compare`) or an index is not one of B's traces.",
        (
            *_PAIR,
            Param(
                "indices",
                "id_list",
                f"Comma-separated graph_executions indices of run B (at most {PAGE_CAP}).",
                required=True,
                maximum=PAGE_CAP,
            ),
            *_TOLERANCES,
        ),
        compare_traces,
        "CompareTracesResponse",
    ),
)

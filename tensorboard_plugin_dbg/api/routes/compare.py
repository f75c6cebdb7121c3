"""Comparing two runs (issue #27): `compare?b=RUN&a=BASE&begin&end`, the first divergence of run B from run A and
a page of the differing tensors in B's order. What cannot be compared (different programs, different modes, a run
still being written) is a 400 whose message starts with the reason's code — never a false "no divergence"."""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis.compare import comparison, document, metrics
from tensorboard_plugin_dbg.api import errors
from tensorboard_plugin_dbg.api.params import Param, Params
from tensorboard_plugin_dbg.api.routes.shared import BEGIN, END
from tensorboard_plugin_dbg.api.spec import RouteSpec
from tensorboard_plugin_dbg.index.protocol import Catalog, NotFound, RunQueries
from tensorboard_plugin_dbg.wire import types as wire


def comparison_of(run_a: RunQueries, run_b: RunQueries, tol: metrics.Tolerances) -> comparison.Comparison:
    """One comparison per (A, B, versions, tolerances), kept in B's derived cache: pages reuse it.

    Lock order: it is built holding *no* run's lock, then stored (DerivedCache.put). A comparison reads both runs,
    and reading run A may build one of A's derived values under A's lock; built under B's lock (DerivedCache.get),
    A vs B and B vs A at once (two tabs) would each hold one run's lock and wait for the other's. So the rule of
    index/derived.py holds: a thread holds at most one run's DerivedCache lock, and no build takes another run's.
    Two requests arriving together may build the same comparison twice; the second store wins, both are equal."""
    key = (id(run_a), run_a.version, run_b.version, tol)
    name = ("compare", run_a.name)
    kept = run_b.derived.peek(name, key)
    if kept is None:
        kept = comparison.compare(run_a, run_b, tol)
        run_b.derived.put(name, key, kept)
    return kept


def tolerances_of(p: Params) -> metrics.Tolerances:
    """The tolerances a client passed (TOLERANCES: atol, rtol, tol_ops, tol), shared by every compare route."""
    return metrics.Tolerances(p["atol"], p["rtol"], ((p["tol_ops"], p["tol"]),) if p["tol_ops"] else ())


def run_named(catalog: Catalog, name: str, which: str) -> RunQueries:
    # An unknown name is a bad parameter (400) here: the route names its runs in `a`/`b`, not in `run`.
    try:
        return catalog.run(name)
    except NotFound:
        raise errors.bad_parameter(f"{which}: no run named {name!r}") from None


def compare(catalog: Catalog, p: Params) -> wire.CompareResponse:
    run_b, run_a = run_named(catalog, p["b"], "b"), run_named(catalog, p["a"], "a")
    tol = tolerances_of(p)
    try:
        result = comparison_of(run_a, run_b, tol)
    except comparison.CompareError as e:
        raise errors.bad_parameter(f"{e.code}: {e.message}") from e
    total = len(result.divergent)
    begin, end = min(p["begin"], total), min(p["end"], total)
    doc = document.document(result, listed=0)
    return {
        "run": run_b.name,
        "base": run_a.name,
        "mode": result.mode,
        "counts": doc["counts"],
        "first_divergence": doc["first_divergence"],
        "divergent": document.divergent_page(result, begin, end),
        "begin": begin,
        "end": end,
        "total": total,
        "only_in_a": doc["only_in_a"],
        "only_in_b": doc["only_in_b"],
        "notes": doc["notes"],
    }


_TOL_MAX = 10**9  # a tolerance beyond this admits any float difference: a typo, refused like other bounds
# the parameters every compare route takes (compare_rows.py, compare_values.py), declared once and shared by name
PAIR = (
    Param("b", "str", "Run B, under suspicion (RunInfo.name).", required=True),
    Param("a", "str", "Run A, the baseline (RunInfo.name).", required=True),
)
TOLERANCES = (
    Param("atol", "float", "Absolute tolerance for every float dtype (default: by dtype).", maximum=_TOL_MAX),
    Param("rtol", "float", "Relative tolerance for every float dtype (default: by dtype).", maximum=_TOL_MAX),
    Param("tol_ops", "str", "With tol: an op-name glob whose ops get atol = rtol = tol."),
    Param("tol", "float", "The tolerance of the ops tol_ops matches.", default=0.0, maximum=_TOL_MAX),
)

ROUTES: tuple[RouteSpec, ...] = (
    RouteSpec(
        "compare",
        "Run B compared with run A (the baseline): counts, the first divergence (both sides' op, line and inputs), "
        "ops only in one run, and the differing tensors [begin, end) in B's order. 400 when the runs cannot be "
        "compared (the message starts with why: different_programs, different_modes, run_not_ready, ...).",
        (*PAIR, BEGIN, END, *TOLERANCES),
        compare,
        "CompareResponse",
        paged=True,
    ),
)

"""Root cause of a run's first NaN/∞: the first op whose inputs were finite and whose output was not.

`analyze(run)` returns wire.ts RootCauseResponse minus `run` and `report_text`, its producer without the graph name
and device (`Analysis`; run_verdict.py adds them). Every alert's role (producer, propagator, contained,
expected, unknown: see classify.py and containment.py), for analysis/alerts.py to fill `Alert.role` and the
`role=producer` filter:

    roles_by_row(classification(run), sources, rows)  -> int8 role code per alert (classify.ROLE_NAMES)
    role_name(classification(run), "graph_execution", trace_index)  -> "producer" | ... | None

The first producer (or unknown) not contained is the root cause. It is explained in detail by producer.py (its
inputs' health before it ran, a function input's from its caller, the forward op of a gradient, the data batch, the
user's lines) through a handful of RunQueries calls; what the analysis skipped to get there (contained values,
a circular buffer's dropped records) is said too. The whole-run work is the vectorized classification. Both are
cached per run version in the run's derived-value cache, so polling the route costs nothing until the dump grows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypedDict, TypeVar

import numpy as np
import numpy.typing as npt

from tensorboard_plugin_dbg.analysis import buffer, explain, guards, index_columns, links, producer, producer_inputs
from tensorboard_plugin_dbg.analysis.classify import (
    CANDIDATES,
    CONTAINED,
    PRODUCER,
    PROPAGATOR,
    ROLE_NAMES,
    UNKNOWN,
    Classification,
    classify,
    same_run_prior,
    trace_lookup,
)
from tensorboard_plugin_dbg.analysis.columns import RunColumns
from tensorboard_plugin_dbg.analysis.rules import mutes as mute_rules
from tensorboard_plugin_dbg.analysis.trace_lookup import Lookup, Rows
from tensorboard_plugin_dbg.analysis.unrecorded import message as unrecorded_message
from tensorboard_plugin_dbg.analysis.unrecorded import unrecorded_functions
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

T = TypeVar("T")


class Analysis(TypedDict):
    """The cached root cause: wire.ts RootCauseResponse minus `run` and `report_text`, its producer without
    `graph_name` and `device` (run_verdict.py adds them per request, and says "clean_so_far")."""

    status: Literal["clean", "found", "unknown"]
    message: str
    producer: wire.RootCauseProducerBody | None
    skipped: list[wire.RootCauseSkip]
    first_kept: bool
    producers: int
    propagators: int
    contained: int
    muted: int


_LINKED = 64  # unknown traces whose function inputs are followed to their caller (the first ones: the root cause's)


def _cached(run: RunQueries, name: str, compute: Callable[[], T]) -> T:
    """`compute()`'s value for the run's current version, kept in the run's one derived-value cache
    (index/derived.py: one lock per run, the documented lock order). Concurrent requests right after a version
    change wait for one computation and reuse it (it is seconds and hundreds of MB at 10 M traces)."""
    return run.derived.get(name, run.version, compute)


def classification_if_ready(run: RunQueries) -> Classification | None:
    """The classification of the run's current version if it was already computed; never computes (for callers
    that must not wait for the whole-run analysis, e.g. an alert page while the dump is still being read)."""
    classified = run.derived.peek("classification", run.version)  # (columns, classification, lookup)
    return classified[1] if classified is not None else None


class _OnDemandLookup:
    """A lookup made when asked, so the cached analysis keeps no reference to the index's permutation."""

    def __init__(self, make: Callable[[], Lookup]) -> None:
        self.make = make

    def before(self, tensors: npt.NDArray[Any], at: npt.NDArray[Any]) -> Rows:
        return self.make().before(tensors, at)

    def after(self, tensors: npt.NDArray[Any], at: npt.NDArray[Any]) -> Rows:
        return self.make().after(tensors, at)


def _classified(run: RunQueries) -> tuple[RunColumns, Classification, Lookup]:
    def compute() -> tuple[RunColumns, Classification, Lookup]:
        cols = index_columns.gather(run)
        lookup = trace_lookup(cols)
        found_guards = guards.cached(run, cols, lookup)
        cls, lookup = classify(cols, found_guards.rows, lookup)
        cls.guards = found_guards
        _follow_function_inputs(run, cols, cls, lookup)
        # the index's rows by kind, made again when asked: the cached value keeps no reference to the index's table
        assert cols.make_lookup is not None  # gather() always sets it
        return cols, cls, _OnDemandLookup(cols.make_lookup)

    return _cached(run, "classification", compute)


def columns_if_ready(run: RunQueries) -> RunColumns | None:
    """The columns of the run's current classification if it was already computed; never computes."""
    classified = run.derived.peek("classification", run.version)
    return classified[0] if classified is not None else None


def analysis_if_ready(run: RunQueries) -> Analysis | None:
    """The root cause of the run's current version if it was already computed; never computes."""
    return run.derived.peek("root_cause", run.version)


def classification(run: RunQueries) -> Classification:
    """Roles of every trace and execution of `run` (cached per version)."""
    return _classified(run)[1]


def _follow_function_inputs(run: RunQueries, cols: RunColumns, cls: Classification, lookup: Lookup) -> None:
    """Settles the first unknown traces whose unrecorded inputs are function inputs by what their caller passed in
    (links.py): all finite -> producer, one non-finite -> propagator; otherwise they stay unknown."""
    for row in np.flatnonzero(cls.trace_role == UNKNOWN)[:_LINKED].tolist():
        code = int(cols.trace_op[row])
        tensors = np.asarray(cols.op_input_tensor[cols.op_input_ptr[code] : cols.op_input_ptr[code + 1]], np.int64)
        prior = same_run_prior(cols, lookup, row, tensors)
        trace = run.graph_execution(row, max_elements=0)
        entry = run.op_entry(trace["graph_id"], trace["op_name"])
        if entry is None or len(entry.inputs) != len(tensors):
            continue
        traced_later = lookup.after(tensors, np.full(len(tensors), -1, np.int64)) >= 0
        verdict = PRODUCER
        for (name, _slot), t, p, later in zip(entry.inputs, tensors.tolist(), prior.tolist(), traced_later.tolist()):
            if p >= 0:
                continue
            if not (0 <= t < len(cols.tensor_is_input) and cols.tensor_is_input[t]):
                verdict = UNKNOWN if later else verdict  # its earlier records were dropped; else not a float
                continue
            flag = links.function_input(run, cols, trace["graph_id"], name, row)["flag"]
            if flag is None:
                verdict = UNKNOWN
            elif flag == 1:
                verdict = PROPAGATOR
                break
        cls.trace_role[row] = verdict


def input_sources(run: RunQueries, source: producer_inputs.Source, index: int) -> list[producer_inputs.InputSource]:
    """producer.input_sources over the run's classification (cached per version): the data inputs of graph trace
    (`source` "graph_execution") or execution `index`, each with where its latest value before it was recorded."""
    cols, _cls, lookup = _classified(run)
    return producer_inputs.input_sources(run, cols, lookup, source, index)


def role_name(cls: Classification, source: str, index: int) -> wire.AlertRole | None:
    roles = cls.trace_role if source == "graph_execution" else cls.exec_role
    return ROLE_NAMES[int(roles[index])] if 0 <= index < len(roles) else None


def roles_by_row(cls: Any, src: Any, idx: Any) -> np.ndarray:
    """Role codes (classify.ROLE_NAMES) of the alerts named by (source 0 execution / 1 trace, row).

    Rows the classification has not seen yet (they arrived after it was computed) stay 0."""
    src, idx = np.asarray(src), np.asarray(idx, np.int64)
    roles = np.zeros(len(idx), np.int8)
    for code, table_roles in ((0, cls.exec_role), (1, cls.trace_role)):
        mask = (src == code) & (idx < len(table_roles))
        roles[mask] = table_roles[idx[mask]]
    return roles


def analyze(run: RunQueries, mutes: tuple[mute_rules.Mute, ...] = ()) -> Analysis:
    """wire.ts RootCauseResponse minus `run`. `mutes` (rules/mutes.py): producers they hide are skipped, and the
    answer says how many. Cached per version, and per (version, mutes) when there are mutes."""
    if not mutes:
        return _cached(run, "root_cause", lambda: _analyze(run, ()))
    return run.derived.get("root_cause_muted", (run.version, mutes), lambda: _analyze(run, mutes))


def _first_unmuted(
    run: RunQueries, cols: RunColumns, cls: Classification, mutes: tuple[mute_rules.Mute, ...]
) -> tuple[tuple[str, int] | None, int, tuple[mute_rules.Mute, ...]]:
    """(the first producer or unknown no mute hides, how many hidden ones came before it, the mutes that hid
    them), vectorized: the mutes are matched per trace kind and per execution op type, never per alert."""
    if not mutes:
        return cls.first_producer(cols), 0, ()
    by_kind, by_exec = mute_rules.nan_masks(run, mutes)
    t = np.flatnonzero(np.isin(cls.trace_role, CANDIDATES))
    e = np.flatnonzero(np.isin(cls.exec_role, CANDIDATES))
    if cls.exec_traces_gone is not None:  # such a call is not a cause: the ops inside it were
        e = e[~cls.exec_traces_gone[e]]
    kinds = run.trace_arrays()["kind"]
    hides_kind, hides_type = np.asarray(by_kind.any(axis=0)), np.asarray(by_exec.any(axis=0))
    t_hidden = hides_kind[kinds[t]] if by_kind.size and len(t) else np.zeros(len(t), bool)
    types = run.execution_arrays()["op_type"]
    e_hidden = hides_type[types[e]] if by_exec.size and len(e) else np.zeros(len(e), bool)
    t_ok, e_ok = t[~t_hidden], e[~e_hidden]
    picks = []
    if len(t_ok):
        picks.append((float(cols.trace_wall[t_ok[0]]), 0, "graph_execution", int(t_ok[0])))
    if len(e_ok):
        picks.append((float(cols.exec_wall[e_ok[0]]), 1, "execution", int(e_ok[0])))
    t_skipped, e_skipped = t[t_hidden], e[e_hidden]
    first: tuple[str, int] | None = None
    if picks:
        wall, _, source, index = min(picks)
        first = (source, index)
        t_skipped = t_skipped[cols.trace_wall[t_skipped] <= wall]
        e_skipped = e_skipped[cols.exec_wall[e_skipped] < wall]
    # the mutes that hid a skipped one (a mute that skipped nothing is not named in the note)
    used = np.zeros(len(mutes), bool)
    if len(t_skipped):
        used |= np.asarray(by_kind[:, kinds[t_skipped]].any(axis=1))
    if len(e_skipped):
        used |= np.asarray(by_exec[:, types[e_skipped]].any(axis=1))
    return first, int(len(t_skipped) + len(e_skipped)), tuple(m for m, u in zip(mutes, used) if u)


def _muted_note(mutes: tuple[mute_rules.Mute, ...], hidden: int) -> str:
    reasons = "; ".join(sorted({m.reason for m in mutes if m.reason})) or "no reason given"
    return f"{hidden:,} muted producer alert(s) skipped ({reasons})."


def _answer(
    status: Literal["clean", "found", "unknown"],
    message: str,
    counts: _Counts,
    found: wire.RootCauseProducerBody | None = None,
    skipped: list[wire.RootCauseSkip] | None = None,
    first_kept: bool = False,
) -> Analysis:
    return {
        "status": status,
        "message": message,
        "producer": found,
        "skipped": skipped or [],
        "first_kept": first_kept,
        **counts,
    }


class _Counts(TypedDict):
    producers: int
    propagators: int
    contained: int
    muted: int


def _analyze(run: RunQueries, mutes: tuple[mute_rules.Mute, ...]) -> Analysis:
    cols, cls, lookup = _classified(run)
    first, muted, skipping = _first_unmuted(run, cols, cls, mutes)
    counts: _Counts = {
        "producers": cls.producers,
        "propagators": cls.propagators,
        "contained": cls.count(CONTAINED, 4),
        "muted": muted,
    }
    n_traces, n_execs = len(cols.trace_wall), len(cols.exec_wall)
    if first is not None:
        source, index = first
        if source == "graph_execution":
            found = producer.graph_producer(run, cols, lookup, index, cls.contained)
        else:
            found = producer.eager_detail(run, cols, index)
        skipped = explain.skipped(run, cols, cls, found, source, index)
        dropped = buffer.dropped_calls(cols)
        evicted = any("circular buffer" in i["description"] for i in found["inputs"])
        first_kept = dropped > 0 or evicted
        message = explain.found_message(found, skipped, first_kept, dropped)
        if cls.guards is not None and cls.guards.steps:
            message += " " + guards.describe(cls.guards)
        if muted:
            message = _muted_note(skipping, muted) + " " + message
        return _answer("found", message, counts, found, skipped, first_kept)
    if muted:
        message = _muted_note(skipping, muted) + " No producer is left unmuted: un-mute to see the root cause."
        return _answer("clean", message, counts)
    gone = int(np.count_nonzero(cls.exec_traces_gone)) if cls.exec_traces_gone is not None else 0
    if gone:
        message = (
            f"{gone:,} tf.function call(s) returned NaN/∞, but their graph execution traces are gone: a circular "
            "buffer (circular_buffer_size > 0, the default keeps 1,000 records) dropped them, so which op made "
            "it cannot be known. Re-run with circular_buffer_size=-1 to keep every record."
        )
        return _answer("unknown", message, counts, first_kept=True)
    if counts["propagators"]:
        message = (
            f"{counts['propagators']:,} non-finite tensors, but every one had an input that was already "
            "non-finite: the first NaN/∞ came from before the earliest record kept (a circular buffer keeps "
            "only the last records) or from an untraced op, so its cause cannot be known."
        )
        return _answer("unknown", message, counts)
    if n_traces + n_execs == 0:
        message = (
            "No executions or graph execution traces recorded (yet), so whether a tensor went non-finite "
            "cannot be known. With a circular buffer (the default) they reach disk only when the program "
            "exits."
        )
        return _answer("unknown", message, counts)
    if not cls.any_finiteness_info:
        modes = ", ".join(m for m in run.info().get("debug_modes", []) if m != "UNSPECIFIED") or "this"
        message = (
            f"This run was dumped in {modes} mode, which records no NaN/∞ information: whether a tensor went "
            "non-finite cannot be known. Re-run with tensor_debug_mode='FULL_HEALTH'."
        )
        return _answer("unknown", message, counts)
    unrecorded = unrecorded_functions(run)
    if unrecorded is not None:  # no NaN/∞ in what was recorded, but the step itself was never recorded
        return _answer("unknown", unrecorded_message(unrecorded, n_traces, n_execs), counts)
    if counts["contained"]:
        message = (
            f"No NaN or ∞ escaped: {counts['contained']:,} non-finite tensors were all absorbed by the ops that "
            f"read them (a -inf mask before a softmax, a gradient skipped by a finiteness check), in "
            f"{n_traces:,} graph execution traces and {n_execs:,} executions."
        )
        note = guards.describe(cls.guards) if cls.guards is not None else ""
        return _answer("clean", f"{message} {note}".strip(), counts)
    message = f"No NaN or ∞ in {n_traces:,} graph execution traces and {n_execs:,} executions."
    return _answer("clean", message, counts)

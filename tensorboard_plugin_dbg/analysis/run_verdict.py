"""What the dashboard and the report say about a whole run, on top of the cached root cause.

- `root_cause(run)`: root_cause.analyze, except that a run not yet read to its end is never called clean: "clean"
  becomes "clean_so_far" with how much was analysed, and "reading" while the analysis has not seen every row the
  header counts (it says nothing about rows it has not looked at, e.g. no "nothing recorded yet"). This is decided
  here, per request, and not inside the cached analysis: the analysis is built (analysis/alerts.py: warm) just
  before the index publishes `done`, so a cached verdict would keep the "so far" of that moment.
- `summary(run)`: the runs overview's one line per run (status, the first NaN's op and the line to fix, the rule
  findings when they were computed), only from what is already cached: `runs` is polled every second for every
  run and must never start a whole-run analysis.
"""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis import capsule_inputs, spike_cause
from tensorboard_plugin_dbg.analysis import root_cause as root_cause_analysis
from tensorboard_plugin_dbg.analysis.root_cause import Analysis
from tensorboard_plugin_dbg.analysis.rules.config import DEFAULTS
from tensorboard_plugin_dbg.analysis.rules.mutes import Mute
from tensorboard_plugin_dbg.index.protocol import NotFound, RunQueries
from tensorboard_plugin_dbg.wire import types as wire


def _graph_name(run: RunQueries, graph_id: str | None) -> str | None:
    """The name of a producer's graph (the tf.function's name; the dump's DebuggedGraph record), None if unknown."""
    if not graph_id:
        return None
    try:
        return run.graph(graph_id)["name"] or None
    except NotFound:
        return None


def _device(run: RunQueries, alert: wire.Alert) -> str | None:
    """Where a producer ran: its trace kind's device, or its eager execution's (first output's); None if unknown."""
    i = int(alert["source_index"])
    if alert["source"] == "graph_execution":
        return run.kind_info(int(run.trace_arrays()["kind"][i]))[4] or None
    return run.executions(i, i + 1)["executions"][0].get("device")


def _with_graph_name(run: RunQueries, rc: Analysis) -> wire.RootCauseResponseBody:
    p = rc["producer"]
    named: wire.RootCauseProducer | None = None
    if p:
        named = {**p, "graph_name": _graph_name(run, p["graph_id"]), "device": _device(run, p["alert"])}
    return {**rc, "producer": named}


def _so_far(run: RunQueries, rc: wire.RootCauseResponseBody) -> wire.RootCauseResponseBody:
    """While the run is read, only what the analysis looked at is claimed: it is built per run version, and a pass
    publishes rows long before it bumps the version, so it may have seen fewer rows than the header counts."""
    if run.done or (rc["status"] == "found" and _traced_producer(rc)):
        return rc
    info = run.info()
    counts, status = info["counts"], info["status"]
    share = status["bytes_read"] / status["bytes_total"] if status["bytes_total"] else 0.0
    cols = root_cause_analysis.columns_if_ready(run)
    seen = (len(cols.trace_wall), len(cols.exec_wall)) if cols is not None else (0, 0)
    covered = seen[0] >= counts["graph_executions"] and seen[1] >= counts["executions"]
    if rc["status"] == "clean" and covered:
        message = (
            f"No NaN/∞ in the first {seen[0]:,} graph execution traces read so far (and {seen[1]:,} executions; "
            f"{int(share * 100)} % of the dump read): not finished yet."
        )
        return {**rc, "status": "clean_so_far", "message": message}
    if covered and rc["status"] != "clean" and not counts["graph_executions"] + counts["executions"]:
        return rc  # nothing recorded yet: true of every row there is
    # Any other diagnosis (a circular buffer that dropped traces, a tf.function call as the first NaN/∞, a function
    # never recorded) is about graph execution traces that may not be read yet (#38): none before they are.
    message = (
        f"Reading graph execution traces ({int(share * 100)} % of the dump read, {counts['graph_executions']:,} "
        f"traces and {counts['executions']:,} executions so far): the root cause follows once they are read."
    )
    return {**rc, "status": "reading", "message": message, "producer": None, "skipped": []}


def _traced_producer(rc: wire.RootCauseResponseBody) -> bool:
    """A producer among the graph execution traces already read: traces are read in order, so no row still unread
    comes before it (an eager tf.function call named instead may only be waiting for its traces)."""
    p = rc["producer"]
    return p is not None and p["alert"]["source"] == "graph_execution"


def root_cause(run: RunQueries, mutes: tuple[Mute, ...] = ()) -> wire.RootCauseResponseBody:
    """wire.ts RootCauseResponse minus `run` and `report_text`. `mutes` (rules/mutes.py): the producers they hide
    are skipped (root_cause.analyze)."""
    named = _with_graph_name(run, root_cause_analysis.analyze(run, mutes))
    rc = _so_far(run, capsule_inputs.with_batch(run, named))  # a capsule's replay: its inputs are the batch
    return _with_spike(run, rc) if rc["status"] == "clean" else rc


def _with_spike(run: RunQueries, rc: wire.RootCauseResponseBody) -> wire.RootCauseResponseBody:
    """A spike capsule's replay is finite: its message says where the spike came from (analysis/spike_cause.py),
    computed once per run version."""
    said = run.derived.get("spike_cause", run.version, lambda: spike_cause.finding(run))
    return {**rc, "message": f"{rc['message']} Loss spike: {said}."} if said else rc


def summary(run: RunQueries) -> wire.RunSummary:
    """wire.ts RunSummary, from the cached root cause of the run's current version (never computed here)."""
    if not run.done:
        return {"status": "indexing", "first_nan": None}
    rc = root_cause_analysis.analysis_if_ready(run)
    if rc is None:
        return {"status": "analyzing", "first_nan": None}
    p = rc["producer"]
    findings = _cached_rule_findings(run)
    if not p:
        out: wire.RunSummary = {"status": rc["status"], "first_nan": None}
        return {**out, "rule_findings": findings} if findings is not None else out
    # the line to fix: the forward op's for a NaN born in the backward pass, the dataset's for data, else its own
    frame = p["user_frame"]
    if p["forward"] and p["forward"]["user_frame"]:
        frame = p["forward"]["user_frame"]
    elif p["data"] and p["data"]["user_frame"]:
        frame = p["data"]["user_frame"]
    first: wire.FirstNan = {
        "op_name": p["op_name"],
        "op_type": p["op_type"],
        "graph_name": _graph_name(run, p["graph_id"]),
        "wall_time": p["alert"]["wall_time"],
        "file": frame["path"] if frame else None,
        "line": frame["line"] if frame else None,
    }
    out = {"status": rc["status"], "first_nan": first}
    return {**out, "rule_findings": findings} if findings is not None else out


def _cached_rule_findings(run: RunQueries) -> int | None:
    """How many rule findings (default thresholds) the run's current version has, if they were computed already
    (never computed here: `runs` is polled); None when not known yet."""
    evaluated = run.derived.peek("rule_findings", (run.version, DEFAULTS))
    return len(evaluated["findings"]) if evaluated is not None else None

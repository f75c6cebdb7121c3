"""Two runs compared: alignment, differences, counts, and the lists the CLI, the HTML page and the API show.

`compare(run_a, run_b, tol)` refuses (CompareError, with a code and why) what it cannot compare honestly: a run
still being written, runs recorded in different tensor_debug_modes (two health modes excepted: they compare what
both record), NO_TENSOR runs (nothing to compare), and runs
that do not look like one program (under half their op keys shared, or eager op sequences under half alike) — never
a false "no divergence". Everything it returns is in B's order (B is the run under suspicion, A the baseline).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tensorboard_plugin_dbg.analysis.compare import align, differences, unordered
from tensorboard_plugin_dbg.analysis.compare.metrics import HEALTH_MODES, Metric, Tolerances
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.reader.schema import MODE_NAMES
from tensorboard_plugin_dbg.wire import types as wire

MIN_OVERLAP = 0.5  # shared op keys (or eager sequence similarity) under which two runs are not one program


class CompareError(Exception):
    """The runs cannot be compared; `code` names why (wire.ts error codes), the message says what to do."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclasses.dataclass
class Comparison:
    run_a: RunQueries
    run_b: RunQueries
    tol: Tolerances
    keys_a: align.TraceKeys
    keys_b: align.TraceKeys
    traces: align.Pairs
    trace_differs: np.ndarray  # bool per trace pair
    trace_metrics: dict[int, Metric]  # FULL_TENSOR metrics of differing trace pairs, by pair position
    execs: align.Pairs
    exec_names_a: list[str]
    exec_names_b: list[str]
    exec_differs: np.ndarray
    exec_metrics: dict[int, Metric]
    mode: str  # the runs' tensor_debug_mode(s), e.g. "FULL_HEALTH"
    # every differing pair in B's order (by B's wall time): (0 graph | 1 eager, pair position)
    divergent: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 2), np.int32))

    @property
    def counts(self) -> wire.CompareCounts:
        return {
            "matched": len(self.traces.b) + len(self.execs.b),
            "divergent": len(self.divergent),
            "only_in_a": len(self.traces.only_a) + len(self.execs.only_a),
            "only_in_b": len(self.traces.only_b) + len(self.execs.only_b),
            "matched_traces": len(self.traces.b),
            "matched_executions": len(self.execs.b),
            "divergent_traces": int(np.count_nonzero(self.divergent[:, 0] == 0)),
            "divergent_executions": int(np.count_nonzero(self.divergent[:, 0] == 1)),
            "only_in_b_traces": len(self.traces.only_b),
        }


DEFAULT_TOLERANCES = Tolerances()


def compare(run_a: RunQueries, run_b: RunQueries, tol: Tolerances = DEFAULT_TOLERANCES) -> Comparison:
    for run, side in ((run_a, "baseline"), (run_b, "changed")):
        if not run.done:
            raise CompareError("run_not_ready", f"{side} run {run.name} is still being written: compare it when done")
    vocab: dict[tuple[str, str, int], int] = {}
    keys_a, keys_b = align.trace_keys(run_a, vocab, True), align.trace_keys(run_b, vocab, False)
    mode = _common_mode(run_a, run_b, keys_a, keys_b)
    names_a, names_b = align.exec_names(run_a), align.exec_names(run_b)
    execs, similarity = align.align_executions(names_a, names_b)
    _check_one_program(keys_a, keys_b, names_a, names_b, similarity)
    traces = align.align_traces(keys_a, keys_b)
    traces = unordered.pair_by_content(run_a, run_b, traces, keys_a, keys_b, unordered.unordered_keys(vocab))
    trace_differs, trace_metrics = differences.trace_differences(run_a, run_b, traces, keys_a, keys_b, tol)
    trace_differs |= differences.op_type_changes(run_a, run_b, traces, keys_a, keys_b)
    exec_differs, exec_metrics = differences.execution_differences(run_a, run_b, execs, tol)
    result = Comparison(
        run_a, run_b, tol, keys_a, keys_b, traces, trace_differs, trace_metrics, execs, names_a, names_b,
        exec_differs, exec_metrics, mode,
    )  # fmt: skip
    result.divergent = _in_b_order(result)
    return result


def _modes(run: RunQueries, keys: align.TraceKeys) -> set[int]:
    exec_modes = np.asarray(run.execution_arrays()["mode"])
    kinds_seen = np.unique(keys.kinds) if len(keys.kinds) else np.zeros(0, np.int64)
    return set(np.unique(keys.kind_mode[kinds_seen]).tolist()) | set(np.unique(exec_modes).tolist())


def _common_mode(run_a: RunQueries, run_b: RunQueries, keys_a: align.TraceKeys, keys_b: align.TraceKeys) -> str:
    modes_a, modes_b = _modes(run_a, keys_a), _modes(run_b, keys_b)
    names_a = "/".join(MODE_NAMES.get(m, str(m)) for m in sorted(modes_a)) or "nothing"
    names_b = "/".join(MODE_NAMES.get(m, str(m)) for m in sorted(modes_b)) or "nothing"
    if not modes_a or not modes_b:
        empty = run_a.name if not modes_a else run_b.name
        raise CompareError("nothing_recorded", f"run {empty} holds no trace and no execution: nothing to compare")
    if modes_a != modes_b and not (modes_a | modes_b) <= set(HEALTH_MODES):
        raise CompareError(
            "different_modes",
            f"the runs were recorded in different tensor_debug_modes (baseline: {names_a}, changed: {names_b}); "
            "record both with the same mode (FULL_TENSOR shows the most)",
        )
    if modes_a != modes_b:  # health modes: what both record (CURT_HEALTH's flag, CONCISE_HEALTH's counts)
        return f"{names_a} vs {names_b}"
    if modes_a == {differences.NO_TENSOR}:
        raise CompareError("no_values", "both runs are NO_TENSOR: they record no values; record FULL_HEALTH or more")
    return names_a


def _check_one_program(
    keys_a: align.TraceKeys, keys_b: align.TraceKeys, names_a: list[str], names_b: list[str], similarity: float
) -> None:
    has_a, has_b = len(keys_a.key) > 0, len(keys_b.key) > 0
    if has_a != has_b:
        raise CompareError("different_programs", "one run has tf.function traces and the other none: not one program")
    overlap = align.key_overlap(keys_a, keys_b)
    if has_a and overlap < MIN_OVERLAP:
        raise CompareError(
            "different_programs",
            f"the runs share {overlap:.0%} of their graph ops (function, op name, output): not the same program",
        )
    if not has_a and names_a and names_b and similarity < MIN_OVERLAP:
        raise CompareError(
            "different_programs",
            f"the runs' eager op sequences are {similarity:.0%} alike: not the same program",
        )


def _in_b_order(c: Comparison) -> np.ndarray:
    """int32[n, 2] (source 0 graph / 1 eager, pair position) of every differing pair, ordered by B's wall time
    (graph before eager at equal times: a call's traces precede its record). The pairs are in B's row order, which
    is wall-time order on one host: the few eager ones are merged in; several hosts' rows are sorted."""
    g = np.flatnonzero(c.trace_differs).astype(np.int32)
    e = np.flatnonzero(c.exec_differs).astype(np.int32)
    walls_g = c.keys_b.wall[c.traces.b[g]]
    walls_e = _exec_wall(c.run_b)[c.execs.b[e]]
    if len(walls_g) > 1 and not bool(np.all(walls_g[1:] >= walls_g[:-1])):  # several hosts
        order = np.argsort(walls_g, kind="stable")
        g, walls_g = g[order], walls_g[order]
    order_e = np.argsort(walls_e, kind="stable")
    e, walls_e = e[order_e], walls_e[order_e]
    at = np.searchsorted(walls_g, walls_e, side="right")
    out = np.zeros((len(g) + len(e), 2), np.int32)
    graph_at = np.ones(len(out), bool)
    graph_at[at + np.arange(len(e))] = False
    out[graph_at, 1] = g
    out[~graph_at, 0] = 1
    out[~graph_at, 1] = e
    return out


def _exec_wall(run: RunQueries) -> np.ndarray:
    return np.asarray(run.execution_arrays()["wall_time"], np.float64)

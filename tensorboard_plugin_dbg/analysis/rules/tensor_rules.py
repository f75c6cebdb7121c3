"""Shape change, dtype change, all-zero tensors and dead ReLUs, from the per-kind stats of tensor_scan.py; value
explosion and vanishing from the magnitudes FULL_TENSOR records carry. Each is a few numpy operations over the
kinds plus one record read per finding for its evidence."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from tensorboard_plugin_dbg.analysis.rules import batch_pattern, cancellation, config, constant_zero
from tensorboard_plugin_dbg.analysis.rules.findings import finding
from tensorboard_plugin_dbg.analysis.rules.tensor_scan import FULL_TENSOR, KindStats
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.reader.tensor_proto import dtype_name
from tensorboard_plugin_dbg.reader.traces import Kind
from tensorboard_plugin_dbg.wire import types as wire

RELU_TYPES = frozenset({"Relu", "Relu6"})
# All-zero by construction, not by training: never an alert.
ZERO_BY_DESIGN = frozenset({"Const", "ZerosLike", "Fill", "Zeros", "Placeholder", "Relu", "Relu6"})
FULL_TENSOR_LIMIT = 20_000  # FULL_TENSOR traces decoded for magnitudes (one record read each)


def describe(mode: float, v: npt.NDArray[np.float64]) -> str:
    if not np.isfinite(v[0]):
        return "unknown"
    if int(mode) == 5:  # SHAPE: the dims
        rank = int(v[2])
        dims = [int(x) for x in v[4 : 4 + min(rank, 6)]]
        return f"{dtype_name(int(v[1]))} {dims}"
    return f"{dtype_name(int(v[2]))} rank {int(v[3])} size {int(v[4])}"


def _shrinks(mode: float, before: npt.NDArray[np.float64], after: npt.NDArray[np.float64]) -> bool:
    """Same dtype and rank, fewer elements (SHAPE: the first dim alone smaller): a last, partial batch."""
    shape = int(mode) == 5
    dtype, rank, size = (1, 2, 3) if shape else (2, 3, 4)
    if not (np.isfinite(before[0]) and before[dtype] == after[dtype] and before[rank] == after[rank]):
        return False
    if shape and int(before[rank]) >= 1:
        n = min(int(before[rank]), 6)
        return bool(after[4] < before[4] and np.array_equal(after[5 : 4 + n], before[5 : 4 + n]))
    return bool(after[size] < before[size])


def changes(run: RunQueries, stats: KindStats, kinds: list[Kind], types: list[str]) -> list[wire.AlertBody]:
    """shape_change and dtype_change findings: one per kind whose output changed between two of its steps;
    batch_alternates instead of shape_change where only the batch size changes, in a rhythm (batch_pattern.py)."""
    out: list[wire.AlertBody] = []
    partial: dict[str, int] = {}  # graph -> ops whose batch shrank once, at their last trace
    first_partial: dict[str, int] = {}  # graph -> its one finding's position in `out`
    rule: wire.AlertType
    pipeline = {gid for gid, name, _outer in run.graph_entries() if name.startswith(batch_pattern.DATA_FUNCTION)}
    for rule, counts, first in (
        (config.SHAPE_CHANGE, stats.shape_changes, stats.first_shape_change),
        (config.DTYPE_CHANGE, stats.dtype_changes, stats.first_dtype_change),
    ):
        hit = np.flatnonzero(counts > 0)
        if not len(hit):
            continue
        pos = first[hit]
        rows = np.stack([stats.order[pos - 1], stats.order[pos]], axis=1).reshape(-1)
        modes, vectors = run.trace_vectors(rows)
        walls = run.trace_arrays()["wall_time"]
        for j, k in enumerate(hit.tolist()):
            graph_id, op_name, slot = kinds[k][:3]
            before, after = describe(modes[2 * j], vectors[2 * j]), describe(modes[2 * j + 1], vectors[2 * j + 1])
            step = int(pos[j] - stats.starts[k])
            # a shape that changed more than once: its batch sizes, read once (batch_pattern.py)
            read = batch_pattern.sizes(run, stats, k) if rule == config.SHAPE_CHANGE and counts[k] >= 2 else None
            # a tf.data function's partial batch may be traced before the full ones (its threads' order)
            early = read is not None and graph_id in pipeline and batch_pattern.one_short_batch(read)
            last = early or (counts[k] == 1 and step + 1 == int(stats.steps[k]))
            shrinks = early or _shrinks(modes[2 * j], vectors[2 * j], vectors[2 * j + 1])
            if rule == config.SHAPE_CHANGE and last and shrinks:
                partial[graph_id] = partial.get(graph_id, 0) + 1
                if partial[graph_id] > 1:  # a last partial batch: said once per function, not once per op
                    continue
                first_partial[graph_id] = len(out)
            what = "shape" if rule == config.SHAPE_CHANGE else "dtype"
            evidence = (
                f"output {what} changed at trace {step + 1} of {int(stats.steps[k])}: {before} -> {after} "
                f"({int(counts[k])} change(s))"
            )
            found_rule = rule
            # a batch size that alternates (train/eval, a last partial batch) is one finding with its own caption
            beat = batch_pattern.rhythm(read) if read is not None and not early else None
            if beat is not None:
                found_rule, evidence = config.BATCH_ALTERNATES, f"{beat.text()}; first at trace {step + 1}"
            row = int(rows[2 * j + 1])
            out.append(
                finding(
                    found_rule,
                    "graph_execution",
                    row,
                    walls[row],
                    (graph_id, op_name, types[k], slot),
                    step,
                    int(counts[k]),
                    evidence,
                )
            )
    for graph_id, at in first_partial.items():
        if partial[graph_id] > 1:
            more = partial[graph_id] - 1
            out[at]["evidence"] += f"; a last partial batch: {more} more op(s) of this function shrank with it"
    return out


def zeros(
    run: RunQueries,
    stats: KindStats,
    kinds: list[Kind],
    types: list[str],
    t: config.Thresholds,
    skipped: Callable[[], tuple[npt.NDArray[np.float64], str]] | None = None,
) -> list[wire.AlertBody]:
    """dead_relu (ReLU outputs) and all_zero (other tensors) findings: all zero for enough consecutive steps.
    `skipped()`: (sorted wall times of the steps whose update a finiteness check skipped, who skipped them), asked
    once there is a finding: a value that stayed zero while its updates were skipped says so."""
    out: list[wire.AlertBody] = []
    walls = run.trace_arrays()["wall_time"]
    skipped_walls: tuple[npt.NDArray[np.float64], str] | None = None
    for k in np.flatnonzero(stats.zero_run > 0).tolist():
        relu = types[k] in RELU_TYPES
        need = t.dead_steps if relu else t.zero_steps
        run_len = int(stats.zero_run[k])
        if run_len < need or (not relu and types[k] in ZERO_BY_DESIGN):
            continue
        if not relu and constant_zero.by_construction(run, kinds[k][0], kinds[k][1]):
            continue  # a product with a constant zero (an LSTM's zero initial state), a cast of the literal 0
        end = int(stats.zero_run_end[k])
        begin = end - run_len + 1
        first_step = begin - int(stats.starts[k])
        row = int(stats.order[begin])
        graph_id, op_name, slot = kinds[k][:3]
        what = "every unit of this ReLU output is zero" if relu else "every element is zero"
        evidence = (
            f"{what} for {run_len} consecutive trace(s) (traces {first_step + 1}-{first_step + run_len} of "
            f"{int(stats.steps[k])})"
        )
        if skipped is not None:
            skipped_walls = skipped_walls if skipped_walls is not None else skipped()
            evidence += _skipped_note(skipped_walls, walls[row], walls[int(stats.order[end])], run_len)
        rule: wire.AlertType = config.DEAD_RELU if relu else config.ALL_ZERO
        out.append(
            finding(
                rule,
                "graph_execution",
                row,
                walls[row],
                (graph_id, op_name, types[k], slot),
                first_step,
                run_len,
                evidence,
            )
        )
    return out


def _skipped_note(skipped: tuple[npt.NDArray[np.float64], str], first: float, last: float, run_len: int) -> str:
    """How many of the updates between the first and the last of these zero steps were skipped ("": none)."""
    walls, by = skipped
    n = int(np.searchsorted(walls, last, "right") - np.searchsorted(walls, first, "left"))
    if n <= 0:
        return ""
    return (
        f"; {n} of the {max(run_len - 1, n)} update(s) between these steps were skipped by {by} (non-finite "
        "gradients), so it could not change then: not a sign of a dead unit by itself"
    )


def magnitudes(
    run: RunQueries, stats: KindStats, kinds: list[Kind], types: list[str], t: config.Thresholds
) -> list[wire.AlertBody]:
    """value_explosion (max |x| grows by growth_factor for growth_steps consecutive steps) and value_vanishing (a
    gradient's non-zero max |x| below vanish_floor for vanish_steps steps), over FULL_TENSOR kinds."""
    out: list[wire.AlertBody] = []
    walls = run.trace_arrays()["wall_time"]
    budget = FULL_TENSOR_LIMIT
    for k, info in enumerate(kinds):
        if int(info[3]) != FULL_TENSOR or budget <= 0:
            continue
        rows = stats.order[stats.starts[k] : stats.starts[k + 1]][:budget]
        budget -= len(rows)
        mags = np.array([_max_abs(run, int(r)) for r in rows.tolist()])
        graph_id, op_name, slot = info[:3]
        op = (graph_id, op_name, types[k], slot)
        grow = np.zeros(len(mags), bool)
        grow[1:] = (mags[1:] >= t.growth_factor * mags[:-1]) & (mags[:-1] > 0)
        at = _first_run(grow, t.growth_steps)
        if at >= 0:
            first = at - t.growth_steps
            evidence = (
                f"max |x| grew {t.growth_factor:g}x or more per trace for {t.growth_steps} traces: "
                f"{mags[first]:.3g} at trace {first + 1} -> {mags[at]:.3g} at trace {at + 1}"
            )
            row = int(rows[at])
            out.append(
                finding(config.VALUE_EXPLOSION, "graph_execution", row, walls[row], op, at, t.growth_steps, evidence)
            )
        if _is_gradient(op_name):
            small = (mags > 0) & (mags < t.vanish_floor)
            at = _first_run(small, t.vanish_steps)
            if at >= 0 and cancellation.cancels(
                run, graph_id, op_name, int(rows[at]), mags[at], _max_abs, t.vanish_floor
            ):
                at = -1  # a sum whose exact value is 0 (the gradient through a row mean): small by construction
            if at >= 0:
                evidence = f"gradient max |x| {mags[at]:.3g} < {t.vanish_floor:g} for {t.vanish_steps} traces"
                row = int(rows[at])
                out.append(
                    finding(
                        config.VALUE_VANISHING, "graph_execution", row, walls[row], op, at, t.vanish_steps, evidence
                    )
                )
    return out


def _is_gradient(op_name: str) -> bool:
    return op_name.startswith(("gradient_tape/", "gradients/")) or "Grad" in op_name


def _first_run(flags: npt.NDArray[np.bool_], length: int) -> int:
    """Index where `length` consecutive True first end, or -1."""
    if length <= 0 or len(flags) < length:
        return -1
    window = np.convolve(flags.astype(np.int64), np.ones(length, np.int64), mode="valid")
    hit = np.flatnonzero(window >= length)
    return int(hit[0]) + length - 1 if len(hit) else -1


def _max_abs(run: RunQueries, row: int) -> float:
    health = run.graph_execution(row, max_elements=0)["health"]
    if health["mode"] != "FULL_TENSOR" or health["min"] is None or health["max"] is None:
        return np.nan  # no values recorded, or none finite
    return float(max(abs(float(health["min"])), abs(float(health["max"]))))

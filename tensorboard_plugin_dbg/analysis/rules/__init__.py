"""Alert rules beyond NaN/∞ (issue #18): retracing, shape and dtype change, all-zero tensors, dead ReLUs, value
explosion and vanishing. `evaluate(run, thresholds)` gives every finding in wall-time order, per-rule totals, and
the rules this dump cannot judge with the `enable_dump_debug_info(...)` call that would let them.

Modules: config.py (names, data needs, thresholds), tensor_scan.py (the one pass over the health records, reduced
per kind), tensor_rules.py, retracing.py, findings.py (the finding shape, user lines, the kind table), mutes.py.
Cached in the run's derived-value cache: the scan per version, the findings per (version, thresholds).
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from tensorboard_plugin_dbg.analysis import guards
from tensorboard_plugin_dbg.analysis.rules import (
    config,
    dead_consequences,
    growth_origin,
    retracing,
    tensor_rules,
    tensor_scan,
)
from tensorboard_plugin_dbg.analysis.rules.config import DEFAULTS, Thresholds
from tensorboard_plugin_dbg.analysis.rules.findings import add_user_lines, kind_table
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.reader import capsule_files
from tensorboard_plugin_dbg.wire import types as wire

__all__ = ["DEFAULTS", "Evaluation", "Thresholds", "evaluate"]


class Evaluation(TypedDict):
    """The rules' answer for one run version: findings in wall-time order, per-rule totals, the rules it cannot
    judge."""

    findings: list[wire.AlertBody]
    totals: dict[str, int]
    needs: list[wire.RuleNeed]


def evaluate(run: RunQueries, thresholds: Thresholds = DEFAULTS) -> Evaluation:
    """{"findings": [wire.ts Alert with type = the rule ...] (wall-time order), "totals": {rule: n},
    "needs": [wire.ts RuleNeed ...]} of the run's current version."""
    return run.derived.get("rule_findings", (run.version, thresholds), lambda: _evaluate(run, thresholds))


def _evaluate(run: RunQueries, t: Thresholds) -> Evaluation:
    stats = tensor_scan.scan(run)
    kinds, _graphs, _names, types = kind_table(run)
    found = [
        *retracing.find(run, stats, kinds, types, t),
        *tensor_rules.changes(run, stats, kinds, types),
        *tensor_rules.zeros(run, stats, kinds, types, t, lambda: _skipped_steps(run)),
        *tensor_rules.magnitudes(run, stats, kinds, types, t),
    ]
    found = growth_origin.collapse(run, found)  # one explosion/vanishing finding where the growth starts
    found = dead_consequences.fold(run, found)  # what a dead ReLU zeroes is named under it, not found again
    found.sort(key=lambda f: (f["wall_time"], config.RULE_TYPES.index(f["type"])))
    add_user_lines(run, found)
    totals: dict[str, int] = {}
    for f in found:
        totals[f["type"]] = totals.get(f["type"], 0) + 1
    return {"findings": found, "totals": totals, "needs": needs(run)}


def _skipped_steps(run: RunQueries) -> tuple[np.ndarray, str]:
    """(sorted wall times of the steps a finiteness check skipped, who skipped them): analysis/guards.py's answer
    (cached per run version, shared with the root cause; asked only for a run with an all-zero or dead-ReLU
    finding)."""
    g = guards.cached(run)
    if not g.steps:
        return np.zeros(0), ""
    walls = np.sort(np.asarray(run.trace_arrays()["wall_time"][g.step_rows], np.float64))
    return walls, "LossScaleOptimizer's overflow check" if g.loss_scale else "a finiteness check"


def needs(run: RunQueries) -> list[wire.RuleNeed]:
    """The rules whose data this run's debug modes do not record, and the call that would record it."""
    info = run.info()
    modes = set(info.get("debug_modes", []))
    out: list[wire.RuleNeed] = []
    for rule in config.ALERT_TYPES:
        if rule == config.BATCH_ALTERNATES:  # a kind of shape change: said once, with shape_change
            continue
        wanted = config.NEEDS[rule]
        if wanted and not modes.intersection(wanted):
            out.append(
                {
                    "rule": rule,
                    "title": config.TITLES[rule],
                    "needs": list(wanted),
                    "call": config.advice(
                        wanted,
                        modes,
                        info.get("name", ""),
                        capsule_files.REPLAY_DIR,
                        info.get("framework", ""),
                        directory=run.directory,  # a capsule replay's: the command names the capsule's real folder
                    ),
                }
            )
    return out

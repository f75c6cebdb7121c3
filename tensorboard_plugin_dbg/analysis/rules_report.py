"""The rules' part of a run's report, one formatter for the CLI's `report` and the card's "copy as text" (the card
of a run with no NaN/∞ but a finding copied "CLEAN" while `report` said "NO NaN/∞, 1 rule finding(s)" and listed
it): the findings left after the mutes, per kind its first with its evidence and line, and how many more."""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis import alert_list, rules
from tensorboard_plugin_dbg.analysis.report_text import RuleReport, RunResult, frame_lines, run_section
from tensorboard_plugin_dbg.analysis.rules import config, ranking
from tensorboard_plugin_dbg.analysis.rules import mutes as mute_rules
from tensorboard_plugin_dbg.analysis.rules.mutes import Mute
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire


def rule_report(run: RunQueries, thresholds: config.Thresholds, mutes: tuple[Mute, ...]) -> RuleReport:
    """The run's rule findings left after the mutes, per-rule totals, how many the mutes hid, the rules the dump
    cannot judge."""
    evaluated = rules.evaluate(run, thresholds)
    return _report(evaluated["findings"], evaluated["needs"], mutes)


def _report(found: list[wire.AlertBody], needs: list[wire.RuleNeed], mutes: tuple[Mute, ...]) -> RuleReport:
    shown = [f for f in found if not mute_rules.finding_hidden(f, mutes)]
    totals: dict[str, int] = {}
    for f in shown:
        totals[f["type"]] = totals.get(f["type"], 0) + 1
    return {"findings": shown, "totals": totals, "muted": len(found) - len(shown), "needs": needs}


def rule_lines(report: RuleReport | None, every: bool = False) -> list[str]:
    """Per kind of finding its first with its evidence and line, and how many more (`every`: each finding); none
    when no rule found anything (a line repeated run after run would say nothing). 104 findings listed whole buried
    the root cause above them (#38 item 9)."""
    if report is None or not (report["findings"] or report["muted"]):
        return []
    found = ranking.ranked(report["findings"])  # what breaks training first, retracing last
    muted = f", {report['muted']} muted" if report["muted"] else ""
    lines = [f"  rules: {len(found)} finding(s){muted}"]
    kinds: dict[str, int] = {}
    for f in found:
        kinds[f["type"]] = kinds.get(f["type"], 0) + 1
        if not every and kinds[f["type"]] > 1:
            continue
        where = f"op {f['op_name']} ({f['op_type']})" if f["op_name"] else f"function {f.get('function')}"
        lines.append(f"    {f['type']}: {where}: {f['evidence']}")
        lines.extend(frame_lines("      at", f.get("user_frame"), f.get("source_line")))
    more = {kind: n - 1 for kind, n in kinds.items() if n > 1 and not every}
    if more:
        lines.append(
            "    more: " + ", ".join(f"{n:,} {kind}" for kind, n in more.items()) + " (--all lists every finding)"
        )
    return lines


def section_with_rules(run: RunQueries, result: RunResult, mutes: tuple[Mute, ...]) -> str:
    """The run's section of `report` followed by its rules' lines at the default thresholds, as `report` prints
    them: what the card copies. The rules as the alert list has them (alert_list.py): while the run is read, or
    while their scan runs (seconds on a big dump: the card never waits for it), the section alone."""
    _visible, _hidden, evaluated = alert_list.rule_findings(run, config.DEFAULTS, mutes)
    if evaluated["pending"]:
        return run_section(result)
    result["rules"] = _report(evaluated["findings"], evaluated["needs"], mutes)
    return run_section(result) + "".join(line + "\n" for line in rule_lines(result["rules"]))

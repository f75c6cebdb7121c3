"""The comparison as one JSON-ready document (the CLI's --json, the HTML page, the API's first page) and as text."""

from __future__ import annotations

from typing_extensions import NotRequired, TypedDict

from tensorboard_plugin_dbg.analysis.compare import finding
from tensorboard_plugin_dbg.analysis.compare.comparison import Comparison
from tensorboard_plugin_dbg.analysis.compare.sides import Side
from tensorboard_plugin_dbg.wire import types as wire

DOCUMENT_VERSION = 1  # `compare --json`'s shape (CompareDocument): raised when a field changes meaning or goes


class RunSummary(TypedDict):
    run: str
    traces: int
    executions: int


class CompareDocument(TypedDict):
    """The comparison as `compare --json` prints it (and the HTML page and the `compare` route read it)."""

    format_version: int  # DOCUMENT_VERSION
    a: RunSummary
    b: RunSummary
    mode: str
    tolerance: dict[str, object]  # metrics.Tolerances.as_dict: the tolerances as the client gave them
    counts: wire.CompareCounts
    headline: str
    first_divergence: wire.CompareFinding | None
    divergent: list[wire.CompareItem]  # the first `listed` differing pairs
    only_in_a: list[Side]
    only_in_b: list[Side]
    notes: list[str]
    exit_code: NotRequired[int]  # compare_cli's, added to the JSON it prints


HEALTH_NOTE = (
    "health modes compare counts (zeros, signs, NaN/∞, size): a value that changes without changing them is not "
    'seen; record both runs with tensor_debug_mode="FULL_TENSOR" to compare values'
)


MIXED_NOTE = (
    "the runs were recorded in different health modes ({mode}): compared on what both record; record both with "
    "FULL_HEALTH (or FULL_TENSOR) to compare more"
)


def headline(mode: str, found: bool) -> str:
    """The finding's title: in a health mode it is the first change in *counts*, and says at once what is unseen."""
    if "HEALTH" in mode or mode == "SHAPE":
        return (
            "First change in counts (value changes that keep the counts are not seen)"
            if found
            else ("No change in counts (value changes that keep the counts are not seen)")
        )
    return "First divergence" if found else "No divergence"


def divergent_page(c: Comparison, begin: int, end: int) -> list[wire.CompareItem]:
    """Differing pairs [begin, end) in B's order, each with both sides and its metric."""
    out: list[wire.CompareItem] = []
    for position, (src, pos) in enumerate(c.divergent[begin:end].tolist(), start=begin):
        out.append({"position": position, **finding.entry(c, src, pos)})
    return out


def document(c: Comparison, listed: int = 50) -> CompareDocument:
    first = finding.first_divergence(c)
    notes = []
    if " vs " in c.mode:
        notes.append(MIXED_NOTE.format(mode=c.mode))
    if "HEALTH" in c.mode or c.mode == "SHAPE":
        notes.append(HEALTH_NOTE)
    return {
        "format_version": DOCUMENT_VERSION,
        "a": _run(c, "a"),
        "b": _run(c, "b"),
        "mode": c.mode,
        "tolerance": c.tol.as_dict(),
        "counts": c.counts,
        "headline": headline(c.mode, first is not None),
        "first_divergence": first,
        "divergent": divergent_page(c, 0, listed),
        "only_in_a": finding.only_in(c, "a"),
        "only_in_b": finding.only_in(c, "b"),
        "notes": notes,
    }


def _run(c: Comparison, which: str) -> RunSummary:
    run = c.run_a if which == "a" else c.run_b
    keys = c.keys_a if which == "a" else c.keys_b
    return {"run": run.name, "traces": len(keys.key), "executions": len(run.execution_arrays()["wall_time"])}


def where(side: Side | None) -> str:
    if side is None:
        return "(none)"
    what = side["op_name"] or side["op_type"] or "?"
    func = f" in {side['function']}" if side["function"] and side["source"] == "graph" else ""
    kind = f" ({side['op_type']})" if side["op_name"] and side["op_type"] else ""
    at = f"{side['file']}:{side['line']}" if side["file"] else "(no user frame recorded)"
    return f"{what}:{side['output']}{kind}{func}, occurrence {side['occurrence']}, at {at}"


def text(doc: CompareDocument) -> str:
    """The CLI's text report."""
    runs = {"a": f"baseline {doc['a']['run']}", "b": f"changed {doc['b']['run']}"}
    lines = [f"compare {runs['b']} vs {runs['a']} ({doc['mode']})"]
    n = doc["counts"]
    lines.append(
        f"  matched {n['matched']}, divergent {n['divergent']}, only in baseline {n['only_in_a']}, "
        f"only in changed {n['only_in_b']}"
    )
    first = doc["first_divergence"]
    if first is None:
        lines.append("  no divergence")
    else:
        lines.append(f"  {doc['headline'].lower()} ({first['kind']}): {first['why']}")
        for label, side in ((runs["a"], first["a"]), (runs["b"], first["b"])):
            lines.append(f"    {label}: {where(side)}")
            if side is not None and side["code"]:
                lines.append(f"         {side['line']}: {side['code']}")
        if first["metric"]:
            lines.append(f"    difference: {first['metric'].get('summary')}")
        for pair in first["inputs"]:
            summary = pair["metric"]["summary"] if pair["metric"] else ""
            lines.append(f"    input {pair['name']}: {pair['status']}" + (f" ({summary})" if summary else ""))
    for role, only in (("baseline", doc["only_in_a"]), ("changed", doc["only_in_b"])):
        lines += [f"  only in {role}: {where(side)}" for side in only[:10]]
    lines += [f"  note: {note}" for note in doc["notes"]]
    return "\n".join(lines) + "\n"

"""The report's text of one run (`python -m tensorboard_plugin_dbg report`), and nothing else: the dashboard's
"copy as text" of the root-cause card is this same text (the `root_cause` route carries it), so the two never say
different things.

    run_result(run)      -> the report's record of one run (the root cause plus the run's error notices)
    run_section(result)  -> its lines of text
    summary_line(results, code) -> the last line: how many runs hold NaN/∞
"""

from __future__ import annotations

import re

from typing_extensions import NotRequired, TypedDict

from tensorboard_plugin_dbg.analysis import run_verdict
from tensorboard_plugin_dbg.analysis.explain import ordinal
from tensorboard_plugin_dbg.analysis.health import describe_output
from tensorboard_plugin_dbg.analysis.rules.mutes import Mute
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

# What one alert is: TensorFlow's own monitor counts one per output slot; an eager execution with two non-finite
# outputs is one alert here. Said wherever a count of alerts is shown.
ALERT_UNIT = "one per non-finite traced tensor or eager execution"


# A run not read to its end is not called clean (run_verdict.root_cause).
_STATUS_WORDS = {"clean_so_far": "NOT FINISHED", "reading": "READING"}


class RuleReport(TypedDict):
    """The report's rules of one run (__main__.py): findings left after the mutes, per-rule totals, how many the
    mutes hid, the rules the dump cannot judge."""

    findings: list[wire.AlertBody]
    totals: dict[str, int]
    muted: int
    needs: list[wire.RuleNeed]


class RunResult(TypedDict):
    """The report's record of one run (its --json output): wire.ts RootCauseResponse's fields with the run's name
    and error notices, and the rules; an unreadable run (__main__.py) has status "error" and the first seven only."""

    run: str
    status: str
    message: str
    producer: wire.RootCauseProducer | None
    producers: float
    propagators: float
    notices: list[wire.Notice]
    contained: NotRequired[float]
    muted: NotRequired[float]
    skipped: NotRequired[list[wire.RootCauseSkip]]
    first_kept: NotRequired[bool]
    rules: NotRequired[RuleReport]
    framework: NotRequired[wire.Framework]  # which framework wrote the run (its words in the text)


def run_result(run: RunQueries, mutes: tuple[Mute, ...] = ()) -> RunResult:
    """The root cause of `run` (run_verdict.root_cause, after the `mutes`) with its name and its error notices."""
    return result_of(run, run_verdict.root_cause(run, mutes))


def result_of(run: RunQueries, root_cause: wire.RootCauseResponseBody) -> RunResult:
    """The report's record of `run` with this root cause (run_verdict.root_cause)."""
    notices = [n for n in run.info()["status"]["notices"] if n.get("severity") == "error"]
    return {"run": run.name, **root_cause, "notices": notices, "framework": run.info()["framework"]}


def holds_nonfinite(r: RunResult) -> bool:
    """A NaN/∞ not hidden by the mutes: a run whose every producer a mute hides (status clean, `muted` > 0) does
    not count."""
    if r["status"] == "found":
        return True
    all_muted = bool(r.get("muted")) and r["status"] == "clean"
    return bool(r["producers"] or r["propagators"]) and not all_muted


# Graphs Keras builds for itself (shape inference), not a tf.function the user wrote (as the dashboard's
# widgets/graph_names.ts says); Keras numbers them under tf.distribute (`scratch_graph_1`).
_KERAS_GRAPHS = re.compile(r"scratch_graph(_\d+)?")
_JAX_WHILE_BODY = re.compile(r"\.while_\d+$")  # a while loop's body as the JAX writer names it (`jit_step.while_2`)
_JAX_SHARD_MAP_BODY = re.compile(r"\.shard_map_\d+$")  # a shard_map's (or pmap's) body (jax/shard_bodies.py)


def graph_kind(graph_name: str, framework: str = "tensorflow") -> str:
    """What a graph is, in two words: "tf.function", "Keras graph" for Keras's own scratch graph, or, in a JAX run,
    "jitted function"."""
    if framework == "jax" and _JAX_WHILE_BODY.search(graph_name):  # its condition runs unrecorded (jax/bodies.py)
        return "while loop body in a jitted function; its condition function runs unrecorded"
    if framework == "jax" and _JAX_SHARD_MAP_BODY.search(graph_name):  # counts summed over the mesh's devices
        return "shard_map body in a jitted function; its figures cover every device's shard"
    if framework == "jax":
        return "jitted function"
    return "Keras graph" if _KERAS_GRAPHS.fullmatch(graph_name) else "tf.function"


def _where(p: wire.RootCauseProducer, framework: str = "tensorflow") -> str:
    if not p["op_name"]:
        return f"eager {p['op_type']}"
    # The op type only where it says more than the name (no "Log (Log)").
    kind = "" if p["op_type"] in ("", p["op_name"]) else f" ({p['op_type']})"
    name = p.get("graph_name")
    graph = f" in {name} ({graph_kind(name, framework)})" if name else ""
    return f"op {p['op_name']}{kind}{graph}"


def run_section(r: RunResult) -> str:
    """The report's lines for one run, each line once."""
    lines: list[str] = []
    findings = len(r["rules"]["findings"]) if "rules" in r else 0
    status = _STATUS_WORDS.get(r["status"], r["status"].upper())
    if r["status"] == "clean" and findings:  # no NaN/∞, but not "clean": the rules found something
        status = f"NO NaN/∞, {findings:,} rule finding(s)"
    head = f"run {r['run']}: {status}"
    if r["producers"] or r["propagators"]:
        head += f" — {r['producers']:,} producer / {r['propagators']:,} propagator alerts ({ALERT_UNIT})"
    p = r.get("producer")
    if not p:
        # One line per run without a producer: its verdict and why (a separate line would repeat run after run).
        lines.append(f"{head} — {r['message']}")
    else:
        alert = p["alert"]
        lines.append(head)
        if p.get("overflow"):  # the values grew out of range: said before the op that overflowed (#38 item 9)
            lines.append(f"  {p['overflow']}")
        label = "first producer" if p.get("role", "producer") == "producer" else "first non-finite (inputs unknown)"
        where = _where(p, r.get("framework", "tensorflow"))
        lines.append(
            f"  {label}: {where}, {alert['source'].replace('_', ' ')} #{alert['source_index']}"
            f", its {ordinal(p.get('run_number', 0) + 1)} {_RUN_WORD[alert['source']]}"
        )
        if p.get("loss"):  # an anonymous loss op: which loss, and the compile() line that chose it (#38 item 5)
            lines.append(f"  {p['loss']}")
        if p.get("untraced_body"):  # a JAX op whose body was not traced made it (analysis/loop_iterations.py)
            lines.append(f"  {p['untraced_body']}")
        if p.get("device"):  # "which device did this op run on", with no set_log_device_placement
            lines.append(f"  device: {p['device']}")
        lines.append(f"  output: {describe_output(p['output_health'])}")
        fwd = p.get("forward")
        if fwd:
            kind = "" if fwd["op_type"] == fwd["op_name"] else f" ({fwd['op_type']})"
            lines.append(f"  gradient of: op {fwd['op_name']}{kind} — the forward op, its line is the one to fix")
            lines.extend(frame_lines("  fix", fwd["user_frame"], fwd["source_line"]))
            if fwd.get("why"):
                lines.append(f"  why: {fwd['why']}")
        if p.get("capsule_batch"):  # a capsule's replay: what the captured batch held
            lines.append(f"  {p['capsule_batch']}")
        data = p.get("data")
        if data:
            lines.extend(_data_lines(data))
        lines.append("  inputs:" + ("" if p["inputs"] else " none"))
        lines.extend(f"    {inp['description']}" for inp in p["inputs"])
        if not p["inputs_known"] and p["inputs"]:
            mode = (p["output_health"] or {}).get("mode")
            reason = {
                "CURT_HEALTH": "CURT_HEALTH records only whether a tensor holds NaN/∞",
                "CONCISE_HEALTH": "CONCISE_HEALTH records no zeros or signs",
            }.get(
                mode or "", "some inputs were not traced, which trace was read is ambiguous, or no values were recorded"
            )
            lines.append(f"  inputs' health cannot be known: {reason}")
        frame = p["user_frame"]
        if frame:
            lines.extend(frame_lines("  during" if fwd else "  at", frame, p["source_line"]))
        else:
            lines.append("  at: no frame of the op's creation stack is in user code")
    lines.extend(f"  skipped: {skip['description']}" for skip in r.get("skipped") or [])
    if r.get("muted"):
        lines.append(f"  muted: {r['muted']:,} producer alert(s) skipped by a mute")
    if r.get("first_kept"):
        lines.append(
            "  first kept: a circular buffer dropped earlier records; an earlier non-finite tensor may be gone"
        )
    lines.extend(f"  {n['severity']}: {n['message']}" for n in r.get("notices") or [])
    return "\n".join(dict.fromkeys(lines)) + "\n"


# An op's k-th run (wire.ts RootCauseProducer.run_number): a graph op's k-th trace; "execution" is the timeline's
# word, for an eager op's k-th execution only. The card, the graph views and the rules say the same.
_RUN_WORD = {"graph_execution": "trace", "execution": "execution"}


def _data_lines(data: wire.RootCauseData) -> list[str]:
    """The batch that carried the NaN; the dataset's line is the fix when the data came in with the NaN, context
    when the NaN was born inside the pipeline (the producer's line, printed after, is the fix then)."""
    # batches count from 0, as in the JSON, the capsules and Keras's callbacks (README: "Numbering")
    batch = f"batch {data['batch']}" if data["batch"] is not None else "no batch traced after it"
    born = data.get("born_in_pipeline")
    lines = [f"  {'born in the input pipeline, reached' if born else 'the data carried it:'} {batch}; {data['note']}"]
    if data["positions"]:
        lines.append("    non-finite at " + ", ".join(str(tuple(x)) for x in data["positions"]))
    if data["source_op"] and born:
        lines.extend(frame_lines(f"    made by {data['source_op']}: the dataset built at", data["user_frame"], None))
    elif data["source_op"]:
        lines.append(f"    made by {data['source_op']}")
        lines.extend(frame_lines("  fix", data["user_frame"], data["source_line"]))
    return lines


def _warned(r: RunResult) -> bool:
    return "rules" in r and bool(r["rules"]["findings"])


def frame_lines(label: str, frame: wire.StackFrame | None, line: str | None) -> list[str]:
    if not frame:
        return []
    out = [f"{label} {frame.get('path') or '?'}:{frame['line']} in {frame['function']}"]
    if line is not None:
        out.append(f"      {line.strip()}")
    return out


def summary_line(results: list[RunResult], code: int) -> str:
    """E.g. "3 runs: 1 holds NaN/∞, 2 clean (exit 1)": the runs holding NaN/∞ are counted, not all runs; a run
    with rule findings is counted with them, not as clean."""
    n = len(results)
    bad = sum(1 for r in results if holds_nonfinite(r))
    warned = sum(1 for r in results if _warned(r))
    no_nan = [r for r in results if r["status"] == "clean" and not holds_nonfinite(r)]
    other = n - bad - len(no_nan)
    clean = sum(1 for r in no_nan if not _warned(r))  # a run with rule findings is not called clean
    parts = []
    if bad:
        parts.append(f"{bad} {'holds' if bad == 1 else 'hold'} NaN/∞")
    if clean:
        parts.append(f"{clean} clean")
    if other:
        parts.append(f"{other} cannot tell")
    if warned:
        parts.append(f"{warned} with rule findings")
    return f"{n} run{'s' if n != 1 else ''}: {', '.join(parts) or 'none'} (exit {code})\n"

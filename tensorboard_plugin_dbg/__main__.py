"""`python -m tensorboard_plugin_dbg SUBCOMMAND ...`: command-line tools that need neither TensorBoard's server nor
TensorFlow.

    report LOGDIR [--run RUN] [--json] [--all] [--mute MUTE ...] [--retrace-min N ...]
        For each run under LOGDIR: the root cause of its first NaN/∞ (the producing op, its inputs' health, the user's
        file:line and code), then every alert rule's findings (retracing, shape/dtype change, all-zero, dead ReLU,
        value explosion/vanishing) and the rules the dump cannot judge with the call that would let them.
        --mute hides alerts as the dashboard's mutes do (repeatable): `key=value,...` with keys rule, op_type,
        op_name (a glob, or re:REGEX), graph_id, reason (last: it may hold commas), or the same as a JSON object.
        Exit status, so CI can gate on it:
          0  every run is clean, no rule finding
          1  some run holds a non-finite tensor not hidden by a mute
          2  the input cannot be read (missing directory, no dump found, unknown --run, unreadable run), or no run
             has a non-finite tensor but some run cannot tell (SHAPE / NO_TENSOR modes, nothing recorded yet)
          3  warnings only: no non-finite tensor, every run judged, but some rule found something
        141  the reader closed the pipe first (`report ... | head`): no traceback

        Before the runs, each NaN capsule under LOGDIR (tensorboard_plugin_dbg.capsule): its trigger, step and replay
        verdict; capsules not yet replayed (no dump) make exit 1 (2 when all are damaged).

    replay CAPSULE [--mode FULL_HEALTH|FULL_TENSOR] [--yes] [-- python train.py ARGS]
        Re-runs a NaN capsule's step under tfdbg2 in the user's program (replay_cli.py); exit 0 reproduced,
        1 not reproduced, 2 cannot replay. It RUNS THE PROGRAM THE CAPSULE NAMES: the command, folder and added
        variables are printed first, and a recorded command runs only once confirmed (--yes for scripts).
        Reading a bucket's capsules reads files someone else wrote.
    compare A B [--json] [--html FILE] [--atol X] [--rtol Y] [--tol PATTERN=X ...]
        Where two runs of one program start to differ (compare_cli.py says more).

New subcommands are added as argparse subparsers in `build_parser`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO, cast

from tensorboard_plugin_dbg import terminal

if TYPE_CHECKING:  # imported where used, so that `--help` stays instant
    from tensorboard_plugin_dbg.analysis import report_text
    from tensorboard_plugin_dbg.analysis.rules.mutes import Mute
    from tensorboard_plugin_dbg.index.protocol import RunQueries

EXIT_CLEAN, EXIT_NONFINITE, EXIT_UNREADABLE, EXIT_WARNINGS = 0, 1, 2, 3
# report flags for the rule thresholds: analysis/rules/config.py Thresholds (the API's parameters of the same names)
THRESHOLD_FLAGS = {
    "retrace_min": int,
    "dead_steps": int,
    "zero_steps": int,
    "growth_factor": float,
    "growth_steps": int,
    "vanish_floor": float,
    "vanish_steps": int,
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tensorboard_plugin_dbg", description="tfdbg2 dump tools (no TensorBoard server, no TensorFlow)."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    report = sub.add_parser(
        "report",
        help="root cause of the first NaN/∞ of each run under LOGDIR",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    report.add_argument(
        "logdir", help="a dump directory, or a folder holding several (each is a run); or a URL: gs://, s3://, ..."
    )
    report.add_argument("--run", help="only this run (a name as listed by the report)")
    report.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    report.add_argument(
        "--mute",
        action="append",
        default=[],
        metavar="MUTE",
        help="hide alerts: rule=,op_type=,op_name=GLOB|re:REGEX,graph_id=,reason=... (repeatable)",
    )
    for name, kind in THRESHOLD_FLAGS.items():
        report.add_argument("--" + name.replace("_", "-"), type=kind, metavar="N", help=f"rule threshold {name}")
    report.add_argument("--html", metavar="FILE", help="also write one self-contained HTML page to FILE")
    report.add_argument(
        "--all", action="store_true", help="every rule finding (default: one line per kind, its first, and a count)"
    )
    report.set_defaults(handler=cmd_report)
    from tensorboard_plugin_dbg import replay_cli  # no TensorFlow: the program replays in a child process

    replay_cli.add_parser(sub)
    from tensorboard_plugin_dbg import compare_cli

    compare_cli.add_parser(sub)
    return parser


EXIT_PIPE_CLOSED = 141  # what a shell reports for a writer killed by SIGPIPE (128 + 13)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # every string a command prints may come from someone else's capsule or dump: escaped (terminal.py)
    try:
        with contextlib.redirect_stderr(cast(TextIO, terminal.SafeWriter(sys.stderr))):
            return int(args.handler(args, cast(TextIO, terminal.SafeWriter(sys.stdout))))
    except BrokenPipeError:
        # `report ... | head`: the reader has all it wanted. No traceback; stdout goes to devnull so the flush at
        # exit does not raise again ("Exception ignored ... BrokenPipeError").
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE_CLOSED


# --- report -----------------------------------------------------------------------------------------------------


def _fail(args: argparse.Namespace, out: TextIO, message: str) -> int:
    if args.json:
        from tensorboard_plugin_dbg.api.json_encoding import dumps

        out.write(dumps({"logdir": args.logdir, "exit_code": EXIT_UNREADABLE, "error": message, "runs": []}) + "\n")
    print(f"error: {message}", file=sys.stderr)
    return EXIT_UNREADABLE


def cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    # Imported here so that `--help` stays instant and a broken index cannot break argument errors.
    from tensorboard_plugin_dbg.analysis import report_text
    from tensorboard_plugin_dbg.analysis.rules import mutes as mute_rules
    from tensorboard_plugin_dbg.index.catalog import Catalog
    from tensorboard_plugin_dbg.index.protocol import NotFound

    try:
        mutes = tuple(mute_rules.parse_text(text) for text in args.mute)
    except mute_rules.MuteError as e:
        return _fail(args, out, f"--mute: {e}")
    from tensorboard_plugin_dbg.reader import storage

    remote = storage.is_remote(args.logdir)  # a URL: its listing's failure is the catalog's notice (below)
    logdir = args.logdir if remote else os.path.abspath(args.logdir)
    if not remote and not os.path.isdir(logdir):
        return _fail(args, out, f"{args.logdir}: no such directory")
    try:
        catalog = Catalog(logdir)  # never started: one read pass, no background thread
        runs = catalog.runs()
        notices = list(catalog.notices())
    except OSError as e:
        return _fail(args, out, f"{args.logdir}: cannot be read ({e.strerror or e})")  # strerror: no path twice
    if args.run is not None:
        try:
            runs = [catalog.run(args.run)]
        except NotFound:
            names = ", ".join(r.name for r in runs) or "none"
            return _fail(args, out, f"no run named {args.run!r} under {args.logdir} (runs: {names})")
    capsules, capsule_text = (0, 0), io.StringIO()
    if not args.json:  # NaN capsules (tensorboard_plugin_dbg.capsule) under the logdir: trigger, where, replay verdict
        from tensorboard_plugin_dbg.analysis.capsule_text import report_capsules

        try:
            capsules = report_capsules(logdir, capsule_text)
        except OSError:  # the logdir cannot be listed: the catalog's notices say why, below
            capsules = (0, 0)
        out.write(capsule_text.getvalue())
    if not runs and capsules[0]:  # capsules not replayed yet: each one is a NaN seen in training
        code = EXIT_NONFINITE if capsules[1] else EXIT_UNREADABLE
        _write_html(args, logdir, code, [], capsule_text.getvalue())
        return code
    if not runs:
        # The catalog's notices already say "No tfdbg2 dump found under LOGDIR (…)" and why a folder was unreadable.
        why = "; ".join(n["message"] for n in notices)
        return _fail(args, out, why or f"{args.logdir}: no tfdbg2 dump (tfdbg_events.*) found")

    results: list[report_text.RunResult] = []
    for run in runs:
        try:
            result = report_text.run_result(run, mutes)
            result["rules"] = _rule_findings(run, args, mutes)
        except Exception as e:  # noqa: BLE001 - one unreadable run must not hide the others' reports
            result = {
                "run": run.name,
                "status": "error",
                "message": f"cannot be read: {e}",
                "producer": None,
                "producers": 0,
                "propagators": 0,
                "notices": [],
            }
        results.append(result)

    code = _exit_code(results)
    if args.json:
        from tensorboard_plugin_dbg.api.json_encoding import dumps

        document = {"logdir": logdir, "exit_code": code, "notices": notices, "runs": results}
        document["mutes"] = [m.as_dict() for m in mutes]
        out.write(dumps(document) + "\n")
    else:
        for result in results:
            out.write(report_text.run_section(result))
            _print_rules(result, out, every=args.all)
        _print_needs(results, out)
        out.write("\n" + report_text.summary_line(results, code))
    _write_html(args, logdir, code, results, capsule_text.getvalue())
    return code


def _write_html(args: argparse.Namespace, logdir: str, code: int, results: list[Any], capsules: str) -> None:
    """`--html FILE`: the report as one page, the capsule sections the text report printed included."""
    if args.html:
        from tensorboard_plugin_dbg.analysis import html_page, report_text

        with open(args.html, "w", encoding="utf-8") as f:
            needs = io.StringIO()
            _print_needs(results, needs)  # the "not judged" lines, as the text report prints them
            f.write(
                html_page.report_page(
                    logdir, report_text.summary_line(results, code), results, needs.getvalue(), capsules
                )
            )


def _exit_code(results: list[report_text.RunResult]) -> int:
    from tensorboard_plugin_dbg.analysis.report_text import holds_nonfinite  # NaN/∞ not hidden by a --mute

    if any(holds_nonfinite(r) for r in results):
        return EXIT_NONFINITE
    if not all(r["status"] == "clean" for r in results):
        return EXIT_UNREADABLE
    if any("rules" in r and r["rules"]["findings"] for r in results):
        return EXIT_WARNINGS
    return EXIT_CLEAN


def _rule_findings(run: RunQueries, args: argparse.Namespace, mutes: tuple[Mute, ...]) -> report_text.RuleReport:
    """The run's rule findings left after the mutes (analysis/rules_report.py), at the thresholds of the flags."""
    from tensorboard_plugin_dbg.analysis import rules_report
    from tensorboard_plugin_dbg.analysis.rules import config

    thresholds = config.thresholds_from({name: getattr(args, name, None) for name in THRESHOLD_FLAGS})
    return rules_report.rule_report(run, thresholds, mutes)


def _print_rules(result: report_text.RunResult, out: TextIO, every: bool = False) -> None:
    """The rules' section of a run, after its root cause (analysis/rules_report.py, as the card copies it)."""
    from tensorboard_plugin_dbg.analysis import rules_report

    for line in rules_report.rule_lines(result.get("rules"), every):
        out.write(line + "\n")


def _print_needs(results: list[report_text.RunResult], out: TextIO) -> None:
    """The rules the dumps cannot judge, each once after the runs with the call that would let them (and the runs
    it applies to, when not all)."""
    runs_of: dict[str, list[str]] = {}
    for r in results:
        for need in r["rules"]["needs"] if "rules" in r else []:
            line = f"not judged: {need['rule']} needs tensor_debug_mode={'/'.join(need['needs'])}: {need['call']}"
            runs_of.setdefault(line, []).append(r["run"])
    if runs_of:
        out.write("\n")
    for line, runs in runs_of.items():
        out.write(line + ("" if len(runs) == len(results) else f" (runs: {', '.join(runs)})") + "\n")


if __name__ == "__main__":
    raise SystemExit(main())

"""`python -m tensorboard_plugin_dbg SUBCOMMAND ...`: command-line tools that need neither TensorBoard's server nor
TensorFlow.

    report LOGDIR [--run RUN] [--json]
        For each run under LOGDIR: the root cause of its first NaN/∞ (the producing op, its inputs' health, the user's
        file:line and code). Exit status, so CI can gate on it:
          0  every run is clean
          1  some run holds a non-finite tensor
          2  the input cannot be read (missing directory, no dump found, unknown --run, unreadable run), or no run
             has a non-finite tensor but some run cannot tell (SHAPE / NO_TENSOR modes, nothing recorded yet)

New subcommands are added as argparse subparsers in `build_parser`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

EXIT_CLEAN, EXIT_NONFINITE, EXIT_UNREADABLE = 0, 1, 2


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
    report.add_argument("logdir", help="a dump directory, or a folder holding several (each is a run)")
    report.add_argument("--run", help="only this run (a name as listed by the report)")
    report.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    report.set_defaults(handler=cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.handler(args, sys.stdout)


# --- report -----------------------------------------------------------------------------------------------------


def _fail(args, out: TextIO, message: str) -> int:
    if args.json:
        from tensorboard_plugin_dbg.api.json_encoding import dumps

        out.write(dumps({"logdir": args.logdir, "exit_code": EXIT_UNREADABLE, "error": message, "runs": []}) + "\n")
    print(f"error: {message}", file=sys.stderr)
    return EXIT_UNREADABLE


def cmd_report(args, out: TextIO) -> int:
    # Imported here so that `--help` stays instant and a broken index cannot break argument errors.
    from tensorboard_plugin_dbg.analysis import root_cause
    from tensorboard_plugin_dbg.index.catalog import Catalog
    from tensorboard_plugin_dbg.index.protocol import NotFound

    logdir = os.path.abspath(args.logdir)
    if not os.path.isdir(logdir):
        return _fail(args, out, f"{args.logdir}: no such directory")
    try:
        catalog = Catalog(logdir)  # never started: one read pass, no background thread
        runs = catalog.runs()
        notices = list(catalog.notices())
    except OSError as e:
        return _fail(args, out, f"{args.logdir}: cannot be read ({e})")
    if args.run is not None:
        try:
            runs = [catalog.run(args.run)]
        except NotFound:
            names = ", ".join(r.name for r in runs) or "none"
            return _fail(args, out, f"no run named {args.run!r} under {args.logdir} (runs: {names})")
    if not runs:
        why = "; ".join(n["message"] for n in notices) or "no tfdbg2 dump (tfdbg_events.*) found"
        return _fail(args, out, f"{args.logdir}: no tfdbg2 dump found ({why})")

    results = []
    for run in runs:
        try:
            result = {"run": run.name, **root_cause.analyze(run)}
            result["notices"] = [n for n in run.info()["status"]["notices"] if n.get("severity") == "error"]
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

        out.write(dumps({"logdir": logdir, "exit_code": code, "notices": notices, "runs": results}) + "\n")
    else:
        for result in results:
            _print_run(result, out)
        verdict = {
            EXIT_CLEAN: "all runs clean",
            EXIT_NONFINITE: "non-finite tensors found",
            EXIT_UNREADABLE: "some run could not be read or judged",
        }[code]
        out.write(f"\n{len(results)} run(s): {verdict} (exit {code})\n")
    return code


def _exit_code(results: list[dict[str, Any]]) -> int:
    if any(r["producers"] or r["propagators"] or r["status"] == "found" for r in results):
        return EXIT_NONFINITE
    if all(r["status"] == "clean" for r in results):
        return EXIT_CLEAN
    return EXIT_UNREADABLE


def _print_run(r: dict[str, Any], out: TextIO) -> None:
    w = out.write
    w(f"run {r['run']}: {r['status'].upper()}")
    if r["producers"] or r["propagators"]:
        w(f" — {r['producers']:,} producer / {r['propagators']:,} propagator alert(s)")
    w("\n")
    p = r.get("producer")
    if not p:
        w(f"  {r['message']}\n")
    else:
        from tensorboard_plugin_dbg.analysis.health import describe_output

        where = f"op {p['op_name']} ({p['op_type']})" if p["op_name"] else f"eager {p['op_type']}"
        alert = p["alert"]
        label = "first producer" if p.get("role", "producer") == "producer" else "first non-finite (inputs unknown)"
        w(f"  {label}: {where}, {alert['source'].replace('_', ' ')} #{alert['source_index']}")
        w(f", its run {p.get('run_number', 0) + 1}\n")
        w(f"  output: {describe_output(p['output_health'])}\n")
        if p.get("overflow"):
            w(f"  {p['overflow']}\n")
        fwd = p.get("forward")
        if fwd:
            w(f"  gradient of: op {fwd['op_name']} ({fwd['op_type']}) — the forward op, its line is the one to fix\n")
            _print_frame(w, "  fix", fwd["user_frame"], fwd["source_line"])
        data = p.get("data")
        if data:
            w(f"  the data carried it: batch {data['batch'] + 1}; {data['note']}\n")
            if data.get("positions"):
                w("    non-finite at " + ", ".join(str(tuple(x)) for x in data["positions"]) + "\n")
            if data.get("source_op"):
                w(f"    made by {data['source_op']}\n")
                _print_frame(w, "  fix", data["user_frame"], data["source_line"])
        w("  inputs:" + ("" if p["inputs"] else " none") + "\n")
        for inp in p["inputs"]:
            w(f"    {inp['description']}\n")
        if not p["inputs_known"] and p["inputs"]:
            mode = (p["output_health"] or {}).get("mode")
            reason = {
                "CURT_HEALTH": "CURT_HEALTH records only whether a tensor holds NaN/∞",
                "CONCISE_HEALTH": "CONCISE_HEALTH records no zeros or signs",
            }.get(mode or "", "some inputs were not traced or their mode records no values")
            w(f"  inputs' health cannot be known: {reason}\n")
        frame = p["user_frame"]
        if frame:
            _print_frame(w, "  during" if fwd else "  at", frame, p["source_line"])
        else:
            w("  at: no frame of the op's creation stack is in user code\n")
    for skip in r.get("skipped") or []:
        w(f"  skipped: {skip['description']}\n")
    if r.get("first_kept"):
        w("  first kept: a circular buffer dropped earlier records; an earlier non-finite tensor may be gone\n")
    for n in r.get("notices") or []:
        w(f"  {n['severity']}: {n['message']}\n")


def _print_frame(w: Any, label: str, frame: dict[str, Any] | None, line: str | None) -> None:
    if not frame:
        return
    w(f"{label} {frame.get('path') or '?'}:{frame['line']} in {frame['function']}\n")
    if line is not None:
        w(f"      {line.strip()}\n")


if __name__ == "__main__":
    raise SystemExit(main())

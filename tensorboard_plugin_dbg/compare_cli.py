"""`python -m tensorboard_plugin_dbg compare A B`: where two runs of one program start to differ (issue #27).

    compare A B [--json] [--html FILE] [--atol X] [--rtol Y] [--tol PATTERN=X ...]
    compare LOGDIR [LOGDIR_B] --run-a RUN --run-b RUN ...

A and B are dump folders (or logdirs holding one run each; --run-a / --run-b pick a run in a logdir holding several,
B's logdir defaulting to A's), local or URLs in object storage (gs://, s3://, any fsspec scheme).
B is the run under suspicion, A the baseline: everything is reported in B's order.
Tolerances (|b - a| <= atol + rtol * |a|), by dtype unless overridden: float64 1e-12/1e-9, float32 1e-6/1e-5,
float16 1e-3/1e-3, bfloat16 1e-2/1e-2, integers and bool exact; --atol/--rtol replace the float defaults and
--tol PATTERN=X sets both to X for ops whose name matches the glob PATTERN. Health modes compare counts exactly;
two different health modes compare what both record (CURT_HEALTH's NaN/∞ flag, CONCISE_HEALTH's counts).
Exit status:
  0  no divergence: every aligned tensor within tolerance, no op only in one run
  1  a divergence (first_divergence in --json names both sides' op_name, file, line)
  2  cannot read or cannot compare (missing folder, no dump, still being written, different programs or modes)
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from tensorboard_plugin_dbg.analysis.compare.document import CompareDocument
    from tensorboard_plugin_dbg.index.protocol import RunQueries

EXIT_SAME, EXIT_DIVERGED, EXIT_CANNOT = 0, 1, 2


class _Refused(Exception):
    pass


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "compare",
        help="the first tensor where two runs of one program differ, and its line",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("a", help="run A (the baseline): a dump folder, or a logdir with --run-a")
    p.add_argument("b", nargs="?", help="run B (under suspicion): a dump folder, or a logdir with --run-b")
    p.add_argument("--run-a", help="the run of A's logdir to compare")
    p.add_argument("--run-b", help="the run of B's logdir (A's when B is not given) to compare")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.add_argument("--html", metavar="FILE", help="also write one self-contained HTML page to FILE")
    p.add_argument("--atol", type=float, help="absolute tolerance for every float dtype")
    p.add_argument("--rtol", type=float, help="relative tolerance for every float dtype")
    p.add_argument("--tol", action="append", default=[], metavar="PATTERN=X", help="atol = rtol = X for matching ops")
    p.add_argument("--limit", type=int, default=50, help="divergent tensors listed (default 50)")
    p.set_defaults(handler=cmd_compare)


def cmd_compare(args: argparse.Namespace, out: TextIO) -> int:
    from tensorboard_plugin_dbg.analysis.compare import comparison, document, metrics

    try:
        tol = metrics.Tolerances(args.atol, args.rtol, tuple(metrics.parse_tol(t) for t in args.tol))
        run_a, run_b = _runs(args)
        result = comparison.compare(run_a, run_b, tol)
        doc = document.document(result, max(0, args.limit))
    except (_Refused, ValueError) as e:
        return _fail(args, out, "unreadable", str(e))
    except comparison.CompareError as e:
        return _fail(args, out, e.code, e.message)
    code = EXIT_SAME if doc["first_divergence"] is None else EXIT_DIVERGED
    doc["exit_code"] = code
    if args.html:
        _write_html(args.html, doc, _context(args))
    if args.json:
        from tensorboard_plugin_dbg.api.json_encoding import dumps

        out.write(dumps(doc) + "\n")
    else:
        out.write(document.text(doc))
    return code


def _context(args: argparse.Namespace) -> dict[str, str]:
    """What the HTML page says was compared, so that it reads on its own when attached to a bug report."""
    import datetime
    import platform
    from importlib import metadata

    try:
        version = metadata.version("tensorboard-plugin-dbg")
    except metadata.PackageNotFoundError:
        version = "(not installed: a source checkout)"
    return {
        "baseline folder": args.a + (f" (run {args.run_a})" if args.run_a else ""),
        "changed folder": (args.b if args.b is not None else args.a) + (f" (run {args.run_b})" if args.run_b else ""),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "versions": f"tensorboard-plugin-dbg {version}, Python {platform.python_version()}",
    }


def _write_html(path: str, doc: CompareDocument, context: dict[str, str]) -> None:
    from tensorboard_plugin_dbg.analysis import html_page

    with open(path, "w", encoding="utf-8") as f:
        f.write(html_page.compare_page(doc, context))


def _fail(args: argparse.Namespace, out: TextIO, code: str, message: str) -> int:
    if args.json:
        from tensorboard_plugin_dbg.api.json_encoding import dumps

        error = {"code": code, "message": message}
        out.write(dumps({"exit_code": EXIT_CANNOT, "error": error, "first_divergence": None}) + "\n")
    print(f"error: {message}", file=sys.stderr)
    return EXIT_CANNOT


def _runs(args: argparse.Namespace) -> tuple[RunQueries, RunQueries]:
    if args.b is None and args.run_b is None:
        raise _Refused("give run B: a second folder, or --run-b RUN in A's logdir")
    run_a = _open(args.a, args.run_a, "A")
    run_b = _open(args.b if args.b is not None else args.a, args.run_b, "B")
    return run_a, run_b


def _open(path: str, name: str | None, side: str) -> RunQueries:
    from tensorboard_plugin_dbg.index.catalog import Catalog
    from tensorboard_plugin_dbg.index.protocol import NotFound
    from tensorboard_plugin_dbg.reader import storage

    remote = storage.is_remote(path)  # a URL (gs://, s3://, memory://...): its listing's failure is a notice
    if not remote and not os.path.isdir(path):
        raise _Refused(f"run {side}: {path}: no such directory")
    try:
        catalog = Catalog(path if remote else os.path.abspath(path))  # never started: one read pass
        runs = list(catalog.runs())
        notices = "; ".join(n["message"] for n in catalog.notices())
    except OSError as e:
        raise _Refused(f"run {side}: {path} cannot be read ({e})") from e
    if not runs and remote and notices:  # a missing bucket, denied credentials, an unreachable endpoint
        raise _Refused(f"run {side}: {path}: {notices}")
    names = ", ".join(r.name for r in runs) or "none"
    if name is not None:
        try:
            return catalog.run(name)
        except NotFound:
            raise _Refused(f"run {side}: no run named {name!r} under {path} (runs: {names})") from None
    if not runs:
        raise _Refused(f"run {side}: {path}: no tfdbg2 dump (tfdbg_events.*) found")
    if len(runs) > 1:
        raise _Refused(f"run {side}: {path} holds several runs ({names}): pick one with --run-{side.lower()}")
    return runs[0]

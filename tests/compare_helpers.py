"""Helpers the compare tests share: a program's twin dumps (a, b), the line its bug was injected at, and the CLI's
`compare` run in-process. They lived in test_compare.py, which still re-exports them."""

from __future__ import annotations

import io
import json
import sys

import dumps

from tensorboard_plugin_dbg.__main__ import main


def pair(name: str, mode: str) -> tuple[str, str]:
    return dumps.make_dump(name, "a", mode), dumps.make_dump(name, "b", mode)


def injected_line(name: str) -> int:
    with open(dumps.program_path(name)) as f:
        return next(i for i, line in enumerate(f, 1) if "# INJECTED" in line)


def compare_json(*args: str) -> tuple[int, dict]:
    out = io.StringIO()
    code = _main(out, ["compare", *args, "--json"])
    return code, json.loads(out.getvalue())


def _main(out: io.StringIO, argv: list[str]) -> int:
    old = sys.stdout
    sys.stdout = out
    try:
        return main(argv)
    finally:
        sys.stdout = old

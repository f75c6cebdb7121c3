"""Reading the Timeline panel in an e2e test: the range it shows, waiting for a range, and the call the landing
reveals (#40 item 10), which moves the timeline after the ready marker: a test that pages the timeline waits for it
first, or the reveal moves the page under its clicks."""

from __future__ import annotations

import re
import time
from urllib.parse import quote

from e2e_page import by_testid, read_runs, wait_text

from harness.tensorboard_process import TensorBoardProcess


def shown_range(frame) -> tuple[int, int, int]:
    """(first, last, total) of the executions the timeline shows."""
    text = wait_text(by_testid(frame, "tl-range"), r"\d+–\d+ of")
    first, last, total = re.match(r"([\d,]+)–([\d,]+) of ([\d,]+)", text).groups()
    return int(first.replace(",", "")), int(last.replace(",", "")), int(total.replace(",", ""))


def wait_range(frame, check, what: str, timeout_s: float = 30) -> tuple[int, int, int]:
    """The shown range once check(first, last, total) holds (the reveal waits for two API answers: seconds on a busy
    host)."""
    deadline = time.monotonic() + timeout_s
    got = shown_range(frame)
    while not check(*got):
        if time.monotonic() > deadline:
            raise AssertionError(f"timeline range {got} never became {what}")
        frame.page.wait_for_timeout(100)
        got = shown_range(frame)
    return got


def landed_call(tb: TensorBoardProcess, run: str) -> int:
    """The call the landing reveals in the timeline: the one holding the root cause's trace (#40 item 10)."""
    producer = tb.get_json(f"/data/plugin/dbg/root_cause?run={quote(run)}")["producer"]
    assert producer["alert"]["source"] == "graph_execution"
    index = producer["alert"]["source_index"]
    return tb.get_json(f"/data/plugin/dbg/graph_execution?run={quote(run)}&index={index}")["call_index"]


def wait_landed(frame, tb: TensorBoardProcess) -> tuple[int, int, int]:
    """The shown range once the landing has revealed the root cause's call (the run read to its end first: the
    root cause of a half-read run may be another)."""
    call = landed_call(tb, read_runs(tb)[0]["name"])
    return wait_range(frame, lambda first, last, _total: first <= call <= last, f"the landing's call {call}")

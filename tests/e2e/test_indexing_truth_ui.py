"""End-to-end (issue #29): a 1 M-trace dump opened at once, while it is being read. Nothing on screen contradicts
the header: the progress bar only moves forward (it is over every file of the run from the first answer), and no
panel says nothing was recorded, or that the run is clean, while the header counts rows and the run is still
being read."""

from __future__ import annotations

import re
import threading
import time
import urllib.parse

from big_dump import _make_big_dump
from e2e_page import assert_no_console_errors, dashboard_frame

from harness.tensorboard_process import TensorBoardProcess

FALSE_WHILE_READING = (
    "No executions or graph execution traces recorded",
    "No non-finite values",  # the clean verdict
    "No alerts: no tensor held",
)


def _sample(frame) -> dict:
    return frame.evaluate(
        """() => {
            const q = (id) => document.querySelector(`[data-testid=${id}]`);
            const bar = q('index-progress');
            return {
              progress: bar && !bar.hidden ? bar.value : null,
              count: q('ge-count') ? q('ge-count').innerText : '',
              card: q('root-cause') ? q('root-cause').innerText : '',
              alerts: document.body ? document.body.innerText.includes('No alerts: no tensor held') : false,
              ready: document.body ? document.body.dataset.ready === '1' : false,
            };
        }"""
    )


def _traces(count_text: str) -> int:
    m = re.match(r"^([\d,]+)", count_text.strip())
    return int(m.group(1).replace(",", "")) if m else 0


def _watch_api(tb: TensorBoardProcess, answers: list[dict], stop: threading.Event) -> None:
    """From the moment the reading starts: the run's progress and the root cause's answer, as fast as they
    come."""
    while not stop.is_set():
        runs = tb.get_json("/data/plugin/dbg/runs").get("runs", [])
        for run in runs:
            status = run["status"]
            rc = tb.get_json("/data/plugin/dbg/root_cause?run=" + urllib.parse.quote(run["name"]))
            answers.append({**status, "traces": run["counts"]["graph_executions"], "rc": rc})
            if status["done"]:
                return
        time.sleep(0.02)


def test_nothing_false_while_a_big_dump_is_read(page):
    logdir = _make_big_dump()
    # Started without asking the plugin anything: the reading begins when the page asks for the plugins.
    with TensorBoardProcess(logdir, ready_path="/data/environment") as tb:
        answers: list[dict] = []
        stop = threading.Event()
        watcher = threading.Thread(target=_watch_api, args=(tb, answers, stop), daemon=True)
        page.goto(tb.url + "/#dbg")  # the page's plugins listing starts the reading: it watches from the start
        watcher.start()
        try:
            _check_the_page(page)
        finally:
            stop.set()
            watcher.join(timeout=120)
        read = [a["bytes_read"] / a["bytes_total"] for a in answers if a["bytes_total"]]
        assert len(read) >= 3 and read[0] < 1, read[:5]  # it saw the dump while it was being read
        assert all(b >= a for a, b in zip(read, read[1:])), read  # the API's progress never goes back either
        for a in answers:
            if a["traces"] > 0 and not a["done"]:
                assert "recorded (yet)" not in a["rc"]["message"] and a["rc"]["status"] != "clean", a
        print(f"{len(answers)} API answers while reading; progress {read[0]:.3f} -> {read[-1]:.3f}")


def _check_the_page(page) -> None:
    """The page, sampled every 0.1 s until the run is read: its progress bar and what its panels say."""
    frame = dashboard_frame(page)
    samples: list[dict] = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        s = _sample(frame)
        samples.append(s)
        if s["ready"] and s["progress"] is None and _traces(s["count"]) == 1_000_000:
            break
        time.sleep(0.1)
    reading = [s for s in samples if s["progress"] is not None]
    shown = [s["progress"] for s in reading]
    assert all(b >= a - 1e-9 for a, b in zip(shown, shown[1:])), shown  # never backwards
    for s in reading:
        if _traces(s["count"]) > 0:
            for phrase in FALSE_WHILE_READING:
                assert phrase not in s["card"], s
            assert not s["alerts"], s
        # what the card may say while reading: nothing yet, "reading", "so far", or a producer among the rows seen
        assert not s["card"] or re.search(r"Reading|so far|^Root cause:", s["card"]), s
    print(f"{len(reading)} page samples while reading")
    assert_no_console_errors(page)

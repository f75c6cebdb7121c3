"""End-to-end: the demo written in every tensor debug mode, as five runs of one logdir. Each renders its health
chips (never "unknown" for a mode TF writes), focuses an alert or a trace with one click, and logs no error."""

from __future__ import annotations

import os
import shutil

import dumps
from e2e_helpers import screenshot, wait_focused_source_line
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess

MODES = ["CONCISE_HEALTH", "CURT_HEALTH", "FULL_TENSOR", "NO_TENSOR", "SHAPE"]
# The demo's first non-finite tensor: Log's output, made on this line of the demo program.
LOG_LINE = ("tensorboard_plugin_dbg/demo/buggy_mlp.py", "labels * tf.math.log(probs)")


def test_every_debug_mode(page, tmp_path):
    logdir = str(tmp_path / "logdir")
    for mode in MODES:
        shutil.copytree(dumps.make_dump("demo", "6", mode), os.path.join(logdir, mode.lower()))
    with TensorBoardProcess(logdir) as tb:
        frame = open_dashboard(page, tb)
        picker = by_testid(frame, "run-picker")
        # every run listed (on a busy host the catalog may list them after the first answer, and so after ready)
        frame.wait_for_function(f"document.querySelectorAll('[data-testid=run-picker] option').length >= {len(MODES)}")
        assert picker.locator("option").evaluate_all("os => os.map(o => o.value)") == [m.lower() for m in MODES]
        # Each run says what it holds: the modes that record no values cannot say clean.
        wait_text(picker, r"no_tensor — no NaN/∞ info\s+shape — no NaN/∞ info")
        for mode in MODES:
            picker.select_option(mode.lower())
            wait_text(by_testid(frame, "status"), mode)
            wait_text(by_testid(frame, "ge-count"), r"[1-9][\d,]* traces")
            rows = frame.locator("[data-testid=ge-list] .vl-row[data-ge-index]")
            rows.first.wait_for()
            assert frame.locator("[data-testid=ge-list] .chip-unknown").count() == 0, mode
            focused = frame.locator("[data-testid=ge-list] .vl-row.focused")
            if mode in ("NO_TENSOR", "SHAPE"):
                # No values recorded: no alerts, and the panel says why. The first Log trace, picked by op type.
                assert by_testid(frame, "alert-row").count() == 0
                wait_text(by_testid(frame, "panel-alerts-status"), r"\S")
                by_testid(frame, "filter-op-type").fill("Log")
                wait_text(by_testid(frame, "ge-count"), r"^\d+ of [\d,]+$")
                rows.first.click()
                wait_text(focused.locator(".ge-op"), r"^Log$")
                by_testid(frame, "filter-op-type").fill("")
            else:
                # The first alert is Log's -inf output (or, in CURT_HEALTH, its "has a non-finite" flag).
                row = by_testid(frame, "alert-row").first
                row.wait_for(timeout=20_000)
                assert "Log" in row.inner_text(), (mode, row.inner_text())
                row.click()
                wait_text(focused.locator(".ge-op"), r"^Log$")
                if mode != "CURT_HEALTH":
                    assert focused.locator(".chip-neginf").count() == 1, mode
                    assert focused.locator(":is(.chip-posinf, .chip-nan)").count() == 0, mode
                else:
                    assert focused.locator(".chip-bad").count() == 1
            # The right op in Graph Structure, the right frame in Stack Trace, the right line in Source Code.
            wait_text(by_testid(frame, "gs-focus-op"), r"^Log")
            wait_text(by_testid(frame, "gs-input"), r"probs")
            line = wait_focused_source_line(frame, *LOG_LINE)
            wait_text(frame.locator("[data-testid=stack-frame].selected"), rf"buggy_mlp\.py:{line}\b")
            if mode == "FULL_TENSOR":
                # The focused trace's values are shown (the -inf ones included).
                wait_text(by_testid(frame, "gs-value"), r"(?s)Value float32 \[\d+,\d+\].*-∞")
            screenshot(page, f"modes-{mode.lower()}")
        assert_no_console_errors(page)

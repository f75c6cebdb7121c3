"""End-to-end: the demo written in every tensor debug mode, as five runs of one logdir. Each renders its health
chips (never "unknown" for a mode TF writes), focuses an alert or a trace with one click, and logs no error."""

from __future__ import annotations

import os
import shutil
import tempfile

import dumps
from e2e_helpers import screenshot
from tb_process import TensorBoardProcess
from test_dashboard import assert_no_console_errors, by_testid, open_dashboard, wait_text

MODES = ["CONCISE_HEALTH", "CURT_HEALTH", "FULL_TENSOR", "NO_TENSOR", "SHAPE"]


def test_every_debug_mode(page):
    logdir = tempfile.mkdtemp(prefix="dbg-modes-")
    for mode in MODES:
        shutil.copytree(dumps.make_dump("demo", "6", mode), os.path.join(logdir, mode.lower()))
    with TensorBoardProcess(logdir) as tb:
        frame = open_dashboard(page, tb)
        picker = by_testid(frame, "run-picker")
        assert picker.locator("option").all_inner_texts() == [m.lower() for m in MODES]
        for mode in MODES:
            picker.select_option(mode.lower())
            wait_text(by_testid(frame, "status"), mode)
            wait_text(by_testid(frame, "ge-count"), r"[1-9][\d,]* traces")
            rows = frame.locator("[data-testid=ge-list] .vl-row[data-ge-index]")
            rows.first.wait_for()
            assert frame.locator("[data-testid=ge-list] .chip-unknown").count() == 0, mode
            if mode in ("NO_TENSOR", "SHAPE"):
                # No values recorded: no alerts, and the panel says why.
                assert by_testid(frame, "alert-row").count() == 0
                wait_text(by_testid(frame, "panel-alerts-status"), r"\S")
                rows.first.click()
            else:
                row = by_testid(frame, "alert-row").first
                row.wait_for(timeout=20_000)
                row.click()
                wait_text(frame.locator("[data-testid=ge-list] .vl-row.focused"), r"\S")
                if mode != "CURT_HEALTH":
                    assert (
                        frame.locator(
                            "[data-testid=ge-list] .vl-row.focused :is(.chip-neginf, .chip-posinf, .chip-nan)"
                        ).count()
                        >= 1
                    )
                else:
                    assert frame.locator("[data-testid=ge-list] .vl-row.focused .chip-bad").count() == 1
            wait_text(by_testid(frame, "gs-focus-op"), r"\S")
            if mode == "FULL_TENSOR":
                # The focused trace's values are shown (the -inf ones included).
                wait_text(by_testid(frame, "gs-value"), r"(?s)Value float32 \[\d+,\d+\].*-∞")
            by_testid(frame, "stack-frame").first.wait_for(timeout=20_000)
            frame.locator(".cm-focus-line").wait_for(timeout=20_000)
            screenshot(page, f"modes-{mode.lower()}")
        assert_no_console_errors(page)

"""End-to-end (#26): from a NaN capsule's card to the culprit line, in Chromium against a real `tensorboard`.

The capsule of tests/programs/capsule_fit.py is replayed (`python -m tensorboard_plugin_dbg replay`), the dashboard
opened on the folder of capsules: the card shows the trigger, step / epoch / batch, the verdict and the replay
command, the poisoned sample first; its button opens the replay's run, whose root cause highlights the line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import dumps
import pytest
from e2e_helpers import screenshot, wait_focused_source_line
from test_dashboard import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e


def test_capsule_card_to_the_culprit_line(page, tmp_path):
    program = dumps.program_path("capsule_fit")
    logdir = tmp_path / "capsules"
    shutil.copytree(os.path.join(dumps.make_dump("capsule_fit"), "capsules"), logdir)
    replay = [sys.executable, "-m", "tensorboard_plugin_dbg", "replay", str(logdir), "--"]
    replay += [sys.executable, program, str(tmp_path / "out")]
    proc = subprocess.run(replay, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with TensorBoardProcess(str(logdir)) as tb:
        frame = open_dashboard(page, tb)
        by_testid(frame, "capsules-open").click()
        card = by_testid(frame, "capsule-card")
        card.wait_for(timeout=30_000)
        wait_text(card, r"step 4 · epoch 0 · batch 4")
        wait_text(by_testid(card, "capsule-trigger"), r"trigger: (loss|gradient of \S+): \d+ NaN")
        wait_text(by_testid(card, "capsule-verdict"), r"replay: reproduced")
        wait_text(by_testid(card, "capsule-command"), r"python -m tensorboard_plugin_dbg replay .*capsule_fit\.py")
        first_sample = by_testid(card, "capsule-samples").locator("tbody tr").first
        # the poison here is a finite negative feature (its sqrt is the NaN): no sample holds a non-finite value
        # (test_capsule.py checks that a NaN sample comes first)
        wait_text(first_sample, r"^x\s*\d+\s*0\s")
        screenshot(page, "capsule-1-card")
        by_testid(card, "capsule-open-run").click()
        root_cause = by_testid(frame, "root-cause")
        root_cause.wait_for(timeout=30_000)
        wait_text(root_cause, r"Sqrt", timeout_ms=30_000)
        root_cause.click()
        wait_focused_source_line(frame, program, "# CULPRIT")
        screenshot(page, "capsule-2-line")
        assert_no_console_errors(page)

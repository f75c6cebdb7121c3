"""End-to-end (#41 item 3): a capsule from Keras 3 on JAX, in Chromium against a real `tensorboard`, as a user meets it.

tests/programs/capsule_jax_fit.py trains with `fit` under KERAS_BACKEND=jax and a NaN in x[5, 3] of batch 5; its
capsule is replayed under the JAX writer (`python -m tensorboard_plugin_dbg replay`). The card (the same component as
TensorFlow's) shows the step, the trigger and the verdict, the NaN row first; its button opens the replay's run, whose
root cause says the NaN came with the batch and, clicked, highlights the custom layer's `keras.ops.log` line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import dumps
import pytest
from e2e_helpers import screenshot, wait_focused_source_line
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e
PROGRAM = "capsule_jax_fit"


def _replayed(tmp_path) -> str:
    """A copy of the program's capsules, its capsule replayed (the cached capsule stays as written)."""
    logdir = tmp_path / "capsules"
    shutil.copytree(os.path.join(dumps.make_dump(PROGRAM), "capsules"), logdir)
    command = [sys.executable, "-m", "tensorboard_plugin_dbg", "replay", str(logdir), "--", sys.executable]
    command += [dumps.program_path(PROGRAM), str(tmp_path / "out")]
    proc = subprocess.run(command, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return str(logdir)


def test_a_jax_capsule_card_opens_its_replay_on_the_users_line(page, tmp_path):
    with TensorBoardProcess(_replayed(tmp_path)) as tb:
        frame = open_dashboard(page, tb)
        card = by_testid(frame, "capsule-card")
        card.wait_for(timeout=30_000)
        wait_text(card, r"step 5 · epoch 0 · batch 5")
        wait_text(by_testid(card, "capsule-trigger"), r"trigger: loss: 1 NaN")
        wait_text(by_testid(card, "capsule-verdict"), r"replay: reproduced")
        # the row carrying the NaN first: x, sample 5, one non-finite value
        wait_text(by_testid(card, "capsule-samples").locator("tbody tr").first, r"^▶ x\s*5\s*1\s")
        screenshot(page, "capsule-jax-1-card")
        by_testid(card, "capsule-open-run").click()
        # the replay's root cause, the sentence the capsule's batch adds to it; clicked, the line
        wait_text(by_testid(frame, "root-cause"), r"the NaN came with the batch: x\[5, 3\]", timeout_ms=30_000)
        by_testid(frame, "root-cause").click()
        wait_focused_source_line(frame, dumps.program_path(PROGRAM), "# CULPRIT")
        screenshot(page, "capsule-jax-2-line")
        assert_no_console_errors(page)

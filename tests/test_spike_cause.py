"""The replay of a loss-spike capsule names where the spike came from (analysis/spike_cause.py, #35 "Done when": the
same with a loss spike and no NaN): the batch's rows for targets 1000x too large, the line for a layer whose gain
jumps to 1e4. Real Keras programs (tests/programs/capsule_spike*.py), replayed with the `replay` command (a spike
capsule replays in FULL_TENSOR by default: the walk needs the values), then `report` on the capsules' folder."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from werkzeug.test import Client

from tensorboard_plugin_dbg import capsule
from tests import dumps
from tests.api_helpers import make_app, ok, wait_indexed
from tests.capsule_helpers import assert_replay_holds_no_capsule_machinery, replay, run

pytestmark = pytest.mark.slow


def _report(folder: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_dbg", "report", folder],
        capture_output=True,
        text=True,
        env=dumps.env_for_tf(),
        timeout=300,
    )
    return proc.stdout + proc.stderr


def test_targets_1000x_too_large_in_two_rows_name_those_rows(tmp_path):
    code, text, folder = replay(tmp_path, "capsule_spike", "--rows", "5,2")
    assert code == 0, text
    batch = capsule.load(folder).batch["y"]
    peak = np.abs(batch).max()
    said = re.search(
        r"the spike came with the batch: y rows (\d+) and (\d+) \(\|y\| up to (\S+), (\S+)× the batch's", text
    )
    assert said, text
    assert {int(said[1]), int(said[2])} == {2, 5}  # the rows the program poisoned, the larger first
    assert float(said[3]) == pytest.approx(peak, rel=5e-3)  # "3.81e3": the largest |y| of the captured batch
    assert "the replay's dump records no values" not in text and "tensorboard_plugin_dbg/" not in text
    assert_replay_holds_no_capsule_machinery(folder, text)
    assert said[0] in _report(folder)  # `report` on the capsules' folder says it too (the replay's run)
    # the dashboard: the capsule card's replay run, its root-cause card (the `root_cause` route) says the same
    client = Client(make_app(folder)[0])
    wait_indexed(client)
    (card,) = ok(client, "capsules")["capsules"]
    answer = ok(client, "root_cause", run=card["replay_run"])
    assert answer["status"] == "clean" and f"Loss spike: {said[0]}" in answer["message"]
    assert f"Loss spike: {said[0]}" in answer["report_text"]


def test_a_whole_batch_of_targets_1000x_too_large_is_the_batch_not_the_code(tmp_path):
    code, text, folder = replay(tmp_path, "capsule_spike")
    assert code == 0, text
    y = capsule.load(folder).batch["y"]
    said = re.search(r"the spike came with the batch: y of batch 110 of epoch 0 \(\|y\| up to (\S+) in its rows", text)
    assert said, text
    assert float(said[1]) == pytest.approx(np.abs(y).max(), rel=5e-3)
    assert "op compile_loss/mse/sub (Sub)" in text  # where y meets the model's output, ~1000x smaller
    assert "spike starts in the code" not in text
    assert_replay_holds_no_capsule_machinery(folder, text)


def test_a_mirrored_spike_replay_is_judged_and_follows_the_shard_passed_in(tmp_path):
    """MirroredStrategy on two logical CPUs: Keras's numbered scratch graph (`scratch_graph_1`, shape inference,
    never run) once made the replay's report "Cannot judge ... compiled by XLA". A replica's shard is a function
    input the replay's eager call passed in, an eager slice of the captured batch (#38: the walk stopped at that
    StridedSlice, "the step's input"): it is followed to the batch array and the replica's rows of it (the
    capsule's manifest gives each replica's rows) whose largest |x| the shard carries; the other input, the model's
    output, is ~1000x smaller."""
    code, text, folder = replay(tmp_path, "capsule_spike", "--mirrored")
    assert code == 0, text
    line = next(x for x in text.splitlines() if x.startswith("replay run "))
    assert ": CLEAN — " in line and "Cannot judge" not in line and "XLA" not in line, line
    said = re.search(
        r"Loss spike: the spike came with the batch: y of batch \S+ of epoch \S+ "
        r"\(\|y\| up to (\S+) in its rows alike\) goes into op (\S+) \(Sub\), \S+× the op's other input; "
        r"per-sample loss: .*; it reached op \S+ in "
        r"replica (\d)'s shard \(y rows (\d+)-(\d+)\)",
        line,
    )
    assert said, line
    assert said[2].endswith("compile_loss/mse/sub") and "step's input" not in line
    c = capsule.load(folder)
    y, rows = c.batch["y"], c.manifest["replicas"]["rows"]
    assert float(said[1]) == pytest.approx(np.abs(y).max(), rel=5e-3)
    begin, end = rows[said[3]]
    assert (int(said[4]), int(said[5])) == (begin, end - 1), (said[3], rows)
    # the shard named is the one whose largest |y| the replica's input carried: its rows' peak, not the other's
    peaks = {r: float(np.abs(y[a:b]).max()) for r, (a, b) in rows.items()}
    assert len(set(peaks.values())) == len(peaks), peaks  # the case tells the replicas apart


def test_a_layer_whose_gain_jumps_to_1e4_names_its_line(tmp_path):
    code, text, folder = replay(tmp_path, "capsule_spike_code")
    assert code == 0, text
    said = re.search(r"the spike starts in the code: op (\S+) \(Mul\) .*? at (\S+):(\d+) in call: (.*)", text)
    assert said, text
    assert said[1].endswith("/mul") and "gain" in said[1]
    assert os.path.basename(said[2]) == "capsule_spike_code.py"
    assert said[4].startswith("return x * self.gain  # CULPRIT")
    assert "came with the batch" not in text and "tensorboard_plugin_dbg/" not in text
    assert_replay_holds_no_capsule_machinery(folder, text)


def test_an_exp_of_a_large_activation_names_the_exp_line(tmp_path):
    """The exp's output outgrows what its input allows (e^20 from 20): that op and its line, not the multiply by the
    gain one line above, nor the batch."""
    code, text, folder = replay(tmp_path, "capsule_spike_code", "--exp")
    assert code == 0, text
    said = re.search(
        r"the spike starts in the code: op (\S+) \(Exp\) gives \|x\| up to (\S+) from inputs up to (\S+), "
        r"(\S+)× what they allow, the rule's factor 10; at (\S+):(\d+) in call: (.*)",
        text,
    )
    assert said, text
    assert float(said[4]) >= 10 and float(said[2]) >= 10 * float(said[3])  # outgrows its input by the rule's factor
    assert float(said[2]) <= np.exp(float(said[3])) * 1.01  # and no more than e^(its input's largest |x|)
    assert os.path.basename(said[5]) == "capsule_spike_code.py"
    assert said[7].startswith("return keras.ops.exp(h)  # CULPRIT")
    assert "came with the batch" not in text and "tensorboard_plugin_dbg/" not in text


def test_a_spike_capsule_replayed_in_full_health_says_what_it_cannot_see(tmp_path):
    """FULL_HEALTH records no magnitudes: no op is named, the user is told how to get one."""
    folder = tmp_path / "capsules"
    shutil.copytree(os.path.join(run("capsule_spike_code"), "capsules"), folder)
    command = [sys.executable, "-m", "tensorboard_plugin_dbg", "replay", str(folder), "--mode", "FULL_HEALTH", "--"]
    command += [sys.executable, dumps.program_path("capsule_spike_code"), str(tmp_path / "out")]
    proc = subprocess.run(command, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=300)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text
    assert "the replay's dump records no values (replay with --mode FULL_TENSOR to follow the spike to its op)" in text
    assert "spike starts in the code" not in text and "came with the batch" not in text

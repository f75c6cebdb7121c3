"""NanCapsule on Keras 3's JAX backend (#41 item 3): tests/programs/capsule_jax_fit.py trains with `fit` under
KERAS_BACKEND=jax and a bad batch at step 5 (a NaN in x[5, 3], or a finite row that the custom layer's
`keras.ops.log` turns into -inf). The capsule must hold that step's batch bit for bit and every variable as it was
before the step (the program keeps its own copies), in the format TensorFlow's capsules have (read with neither
framework); `replay` must re-run the step under the JAX writer and name the user's line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from werkzeug.test import Client

from tensorboard_plugin_dbg import capsule
from tensorboard_plugin_dbg.capsule.jax_watch import JaxWatch
from tensorboard_plugin_dbg.reader import capsule_files
from tests import dumps
from tests.api_helpers import load_schema, make_app, ok, schema_errors
from tests.capsule_helpers import result, run

pytestmark = pytest.mark.slow
PROGRAM, STEP, CULPRIT = "capsule_jax_fit", 5, "return keras.ops.log(x + 1.0)  # CULPRIT"


def _culprit_line() -> int:
    with open(dumps.program_path(PROGRAM)) as f:
        return next(i for i, line in enumerate(f, 1) if "# CULPRIT" in line)


def _skipped(out: str) -> list[dict]:
    with open(os.path.join(out, "capsules", "skipped.jsonl")) as f:
        return [json.loads(line) for line in f]


@pytest.mark.parametrize("bug", ["nan-input", "log"])
def test_fit_on_jax_captures_the_bad_step_with_its_batch_and_the_state_before_it(bug):
    out = run(PROGRAM, "--bug", bug)
    done = result(out)
    assert done["backend"] == "jax" and done["captured"], done
    c = capsule.load(os.path.join(out, "capsules"))
    expected = np.load(os.path.join(out, "expected.npz"))
    assert sorted(c.batch) == ["x", "y"]
    for name in ("x", "y"):
        assert c.batch[name].dtype == expected[name].dtype
        assert c.batch[name].tobytes() == expected[name].tobytes(), name  # bit for bit, the NaN included
    for key in expected.files:
        if key[:2] in ("w:", "o:"):
            held = c.weights if key.startswith("w:") else c.optimizer
            assert np.array_equal(held[key[2:]], expected[key]), key
    assert len([k for k in expected.files if k.startswith("w:")]) == len(c.weights)
    assert c.step == STEP and c.manifest["batch_index"] == STEP and c.manifest["epoch"] == 0
    assert c.manifest["versions"]["keras_backend"] == "jax" and "tensorflow" not in c.manifest["versions"]
    assert c.trigger["kind"] == "loss" and c.trigger["health"]["size"] == 1
    # stop mode: the trigger step and the one after it applied nothing (the optimizer counted STEP steps)
    assert done["iterations"] == STEP and done["weights_finite"]
    nan_rows = np.flatnonzero((~np.isfinite(c.batch["x"])).any(axis=1))
    assert list(nan_rows) == ([5] if bug == "nan-input" else [])
    # the previous step's batch is on the host (kept every step): its per-sample loss, never an error message
    previous = c.manifest["forensics"]["previous"]
    assert "why" not in previous and previous["batch_index"] == STEP - 1, previous


def test_the_host_reads_the_trigger_counter_every_few_steps_not_every_step():
    done = result(run(PROGRAM, "--bug", "nan-input", "--on-nan", "skip", "--epochs", "2"))
    # check_every=4: one read per 4 steps and one at each epoch's end (and the train's end)
    assert 0 < done["host_reads"] <= done["steps"] // 4 + 2 + 1, done


def test_skip_mode_goes_on_with_finite_weights_and_lists_every_skipped_batch():
    out = run(PROGRAM, "--bug", "nan-input", "--on-nan", "skip", "--epochs", "2")
    done = result(out)
    assert done["epochs_run"] == 2 and done["weights_finite"], done
    assert len(done["captured"]) == 1  # max_capsules=1: the second epoch's NaN is skipped, not captured
    skipped = _skipped(out)
    triggers = [e for e in skipped if e["trigger"] == "loss"]
    held = [e for e in skipped if e["trigger"] == "held"]
    assert [(e["epoch"], e["batch_index"]) for e in triggers] == [(0, STEP), (1, STEP)]
    assert triggers[0]["capsule"] == done["captured"][0] and triggers[1]["capsule"] is None
    # the steps between the trigger and the poll that wrote its capsule held their updates (the state it holds)
    assert all(0 < e["step"] - STEP < 4 for e in held)
    assert done["iterations"] == done["steps"] - len(triggers) - len(held)


def test_fit_called_once_per_epoch_compiles_its_watched_train_function_once():
    out = run(PROGRAM, "--bug", "nan-input", "--on-nan", "skip", "--epochs", "2", "--fit-per-epoch")
    done = result(out)
    assert done["train_functions"] == 1 and done["epochs_run"] == 2 and done["weights_finite"], done
    assert [(e["epoch"], e["batch_index"]) for e in _skipped(out) if e["trigger"] == "loss"] == [(0, STEP), (0, STEP)]


def test_raise_mode_raises_after_writing_the_capsule():
    done = result(run(PROGRAM, "--bug", "nan-input", "--on-nan", "raise"))
    assert done["raised"] and done["captured"][0] in done["raised"]


def test_the_capsule_and_its_report_need_neither_framework():
    folder = os.path.join(run(PROGRAM, "--bug", "nan-input"), "capsules")
    code = (
        "import sys\n"
        "for name in ('jax', 'jaxlib', 'tensorflow', 'keras'): sys.modules[name] = None  # importing one fails\n"
        "from tensorboard_plugin_dbg import capsule\n"
        "from tensorboard_plugin_dbg.__main__ import main\n"
        "print(capsule.load(sys.argv[1]).step)\n"
        "sys.exit(main(['report', sys.argv[1]]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, folder], capture_output=True, text=True, env=dumps.env_for_tf())
    assert proc.stdout.splitlines()[0] == str(STEP), proc.stderr
    assert "row 5 is non-finite" in proc.stdout, proc.stdout


def test_the_dashboards_capsule_card_reads_a_jax_capsule_as_a_tensorflow_one(tmp_path):
    logdir = tmp_path / "logdir"
    shutil.copytree(os.path.join(run(PROGRAM, "--bug", "nan-input"), "capsules"), logdir / "a")
    app, _ = make_app(str(logdir))
    answer = ok(Client(app), "capsules")
    assert schema_errors(load_schema(), "CapsulesResponse", answer) == []
    (card,) = answer["capsules"]
    assert card["status"] == "ok" and card["step"] == STEP and card["bad_weights"] == []
    first = card["samples"][0]
    assert (first["array"], first["sample"], first["nonfinite"]) == ("x", 5, 1)  # the NaN row first
    assert all(sample["nonfinite"] == 0 for sample in card["samples"][1:])


def test_options_the_jax_watch_has_not_got_are_a_clear_error():
    with pytest.raises(ValueError, match="spike"):
        JaxWatch("unused", spike=10.0)
    with pytest.raises(ValueError, match="on_nan"):
        JaxWatch("unused", on_nan="ignore")


UNWATCHED = """
import os
os.environ["KERAS_BACKEND"] = "jax"
import keras, numpy as np
from tensorboard_plugin_dbg.capsule import NanCapsule

class Frozen(keras.Sequential):
    def train_step(self, state, data):  # updates nothing through model.optimizer, reports no loss
        return {}, state

model = Frozen([keras.Input((3,)), keras.layers.Dense(1)])
model.compile("adam", "mse")
model.fit(np.ones((8, 3), "float32"), np.ones((8, 1), "float32"), batch_size=4, verbose=0,
          callbacks=[NanCapsule(os.path.join(os.path.dirname(__file__), "capsules"))])
"""


def test_a_train_step_the_watch_cannot_see_into_is_said_never_silent(tmp_path):
    script = tmp_path / "frozen.py"
    script.write_text(UNWATCHED)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=dumps.env_for_tf())
    assert proc.returncode == 0, proc.stderr
    assert "NanCapsule: frozen's train_step neither applied model.optimizer" in proc.stderr, proc.stderr
    assert "nothing is checked and no capsule will be written" in proc.stderr, proc.stderr


# --- replay -------------------------------------------------------------------------------------------------------


def _replay(tmp_path, *args: str, program: list[str] | None = None) -> tuple[int, str, str]:
    """`replay` on a copy of the capsule (the cached one stays as written): exit, output, the copy."""
    folder = tmp_path / "capsules"
    shutil.copytree(os.path.join(run(PROGRAM, *args), "capsules"), folder)
    command = [sys.executable, "-m", "tensorboard_plugin_dbg", "replay", str(folder), "--"]
    command += program or [sys.executable, dumps.program_path(PROGRAM), str(tmp_path / "out"), *args]
    proc = subprocess.run(command, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=300)
    return proc.returncode, proc.stdout + proc.stderr, str(folder)


def test_replay_of_a_nan_batch_says_the_nan_came_with_the_batch_and_names_the_line(tmp_path):
    code, text, folder = _replay(tmp_path, "--bug", "nan-input")
    assert code == 0, text
    assert "replay: reproduced" in text
    assert "the NaN came with the batch: x[5, 3] (sample 5, batch 5 of epoch 0)" in text, text
    assert f"capsule_jax_fit.py:{_culprit_line()} in LogFeatures.call" in text and CULPRIT in text
    assert "jit_train_step (jitted function)" in text
    verdict = capsule_files.read_verdict(capsule.load(folder).path)
    assert verdict["verdict"] == "reproduced" and verdict["same_trigger"] and verdict["compiled"] is None
    # never a line of the plugin's own (its check, its launcher, its wrappers of Keras's step)
    assert "tensorboard_plugin_dbg/" not in text and "original_step" not in text and "runpy" not in text, text


def test_replay_of_a_code_bug_on_a_finite_record_names_the_log_line(tmp_path):
    code, text, folder = _replay(tmp_path, "--bug", "log")
    assert code == 0, text
    first = text.split("first producer:")[1]
    assert "(log)" in first.splitlines()[0] and "−∞" in first, first
    assert f"capsule_jax_fit.py:{_culprit_line()} in LogFeatures.call" in first and CULPRIT in first
    assert "came with the batch" not in text
    report = subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_dbg", "report", folder],
        capture_output=True,
        text=True,
        env=dumps.env_for_tf(),
    )
    assert "reproduced" in report.stdout and CULPRIT in report.stdout, report.stdout


def test_replay_of_a_log_of_a_negative_record_names_the_element_and_its_value_in_jaxs_words(tmp_path):
    """The first layer takes `keras.ops.log` of the batch itself and x[5, 3] is -2.0: JAX's op is the primitive
    `log` (TensorFlow's is `Log`), and the replay says which element of the batch it received, with its value."""
    code, text, _ = _replay(tmp_path, "--bug", "log-negative")
    assert code == 0, text
    with open(dumps.program_path(PROGRAM)) as f:
        line = next(i for i, s in enumerate(f, 1) if "# RAW CULPRIT" in s)
    assert f"log at capsule_jax_fit.py:{line} received x[5, 3] = -2.0 (batch 5 of epoch 0)" in text, text
    assert "came with the batch" not in text


def test_replay_of_a_custom_loss_names_its_log_line(tmp_path):
    code, text, _ = _replay(tmp_path, "--bug", "loss-log")
    assert code == 0, text
    first = text.split("first producer:")[1]
    assert "(log)" in first.splitlines()[0], first
    assert "return keras.ops.mean(keras.ops.square(keras.ops.log(y) - p))  # LOSS CULPRIT" in first, first


def test_capture_and_replay_on_a_machine_without_tensorflow(tmp_path):
    done = result(run(PROGRAM, "--bug", "nan-input", "--no-tensorflow"))
    assert done["captured"] and not done["tensorflow_loaded"], done
    code, text, folder = _replay(tmp_path, "--bug", "nan-input", "--no-tensorflow")
    assert code == 0, text
    assert "the NaN came with the batch: x[5, 3]" in text and CULPRIT in text, text


def test_replay_through_a_command_that_is_not_python_says_how(tmp_path):
    script = tmp_path / "train.sh"
    script.write_text(f"exec {sys.executable} {dumps.program_path(PROGRAM)} {tmp_path / 'out'}\n")
    code, text, _ = _replay(tmp_path, "--bug", "nan-input", program=["sh", str(script)])
    assert code == 2, text
    assert "replays through `python -m tensorboard_plugin_dbg replay CAPSULE` with a Python command" in text

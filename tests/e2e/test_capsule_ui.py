"""End-to-end (#26): from a NaN capsule's card to the culprit line, in Chromium against a real `tensorboard`.

The capsule of tests/programs/capsule_fit.py is replayed (`python -m tensorboard_plugin_dbg replay`), the dashboard
opened on the folder of capsules: the card shows the trigger, step / epoch / batch, the verdict and the replay
command, the poisoned sample first; its button opens the replay's run, whose root cause highlights the line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile

import dumps
import numpy as np
import pytest
from e2e_helpers import screenshot, wait_focused_source_line
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness import remote_servers as rs
from harness.tensorboard_process import TensorBoardProcess
from tensorboard_plugin_dbg.reader.storage import backends

pytestmark = pytest.mark.e2e

API = "/data/plugin/dbg/"


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
        card = by_testid(frame, "capsule-card")  # its only run is the replay: the folder opens on the card (#36)
        card.wait_for(timeout=30_000)
        wait_text(card, r"step 4 · epoch 0 · batch 4")
        wait_text(by_testid(card, "capsule-trigger"), r"trigger: (loss|gradient of \S+): \d+ NaN")
        wait_text(by_testid(card, "capsule-verdict"), r"replay: reproduced")
        # the folder only: pasted, replay shows the recorded program and asks (no `--`, nothing from the manifest)
        wait_text(by_testid(card, "capsule-command"), r"python -m tensorboard_plugin_dbg replay \S*capsule-step\d+$")
        first_sample = by_testid(card, "capsule-samples").locator("tbody tr").first
        # the poison here is a finite negative feature (its sqrt is the NaN): no sample holds a non-finite value, and
        # the replay's root cause points at the sample with the negative: first, marked (#36), 1 negative
        wait_text(first_sample, r"^▶ x\s*\d+\s*0\s*-\S+\s*\S+\s*1\s")
        screenshot(page, "capsule-1-card")
        by_testid(card, "capsule-open-run").click()
        root_cause = by_testid(frame, "root-cause")
        root_cause.wait_for(timeout=30_000)
        wait_text(root_cause, r"Sqrt", timeout_ms=30_000)
        root_cause.click()
        wait_focused_source_line(frame, program, "# CULPRIT")
        screenshot(page, "capsule-2-line")
        assert_no_console_errors(page)


def test_capsule_arrays_open_in_tensor_values(page, tmp_path):
    """From a capsule card (capsule_fit --nan-input: one NaN in the batch, not replayed; a training dump beside it as
    a clean run, so the dashboard opens on the card), the batch input and a weight open in Tensor Values: where they
    come from, their shape and the NaN count, as the capsule's own .npz says (read with numpy here)."""
    logdir = tmp_path / "logdir"
    shutil.copytree(os.path.join(dumps.make_dump("capsule_fit", "--nan-input"), "capsules"), logdir / "capsules")
    shutil.copytree(dumps.make_dump("clean_mlp"), logdir / "train")
    (folder,) = [p for p in (logdir / "capsules").iterdir() if (p / "manifest.json").exists()]
    x = np.load(folder / "batch.npz")["x"]
    kernel = np.load(folder / "weights.npz")["dense/kernel"]
    with TensorBoardProcess(str(logdir)) as tb:
        frame = open_dashboard(page, tb)
        card = by_testid(frame, "capsule-card")
        card.wait_for(timeout=60_000)  # opens on its own: the run beside it is clean, no NaN newer than the capsule
        assert by_testid(frame, "capsules-panel").get_attribute("data-landing") == "capsules"
        by_testid(card, "capsule-arrays").wait_for()
        screenshot(page, "capsule-3-card-arrays")
        card.locator("[data-testid=capsule-array][data-group=batch][data-name=x]").click()
        pane = by_testid(frame, "tensor-values")
        shape = ", ".join(str(d) for d in x.shape)
        wait_text(pane.locator(".tv-title"), rf"capsule step 4 · batch · x\s*float32 \[{shape}\]")
        wait_text(by_testid(frame, "tv-stats"), rf"NaN\s+{int(np.isnan(x).sum())}\b")
        row, col = np.argwhere(np.isnan(x))[0]
        frame.locator(f"[data-testid=tv-grid] .vg-cell.vg-focus[data-index='{row},{col}']").wait_for(timeout=10_000)
        assert by_testid(frame, "tv-inputs").count() == 0 or not by_testid(frame, "tv-inputs").is_visible()
        screenshot(page, "capsule-4-batch-array")
        by_testid(frame, "tv-close").click()  # back to the Capsules panel (#36), no need to open it again
        card.wait_for(state="visible", timeout=5000)
        card.locator("[data-testid=capsule-array][data-group=weights][data-name='dense/kernel']").click()
        shape = ", ".join(str(d) for d in kernel.shape)
        wait_text(pane.locator(".tv-title"), rf"capsule step 4 · weights · dense/kernel\s*float32 \[{shape}\]")
        wait_text(by_testid(frame, "tv-stats"), rf"NaN\s+{int(np.isnan(kernel).sum())}\b")
        assert_no_console_errors(page)


def test_a_capsule_card_from_s3_opens_its_bad_sample_and_downloads_the_array(page, tmp_path):
    """`--dbg_logdir s3://…` (moto on loopback) holding a capsule (capsule_fit --nan-input) beside a clean training
    dump: the dashboard opens on its card, the per-sample table's first row (the NaN sample) opens that sample of the
    batch array in Tensor Values, and the view's .npy link downloads the npz member's bytes."""
    source = os.path.join(dumps.make_dump("capsule_fit", "--nan-input"), "capsules")
    (folder,) = [os.path.join(source, n) for n in os.listdir(source) if os.path.exists(f"{source}/{n}/manifest.json")]
    x = np.load(os.path.join(folder, "batch.npz"))["x"]
    with zipfile.ZipFile(os.path.join(folder, "batch.npz")) as npz:
        member = npz.read("x.npy")
    bad = int(np.argwhere(np.isnan(x))[0][0])
    empty = tmp_path / "empty"
    empty.mkdir()
    with rs.moto_server() as s3, rs.patched_environ(rs.loopback_environment(s3, None)), rs.SocketGuard() as guard:
        fs = backends.make_fs("s3")
        fs.mkdir("logs")
        rs.upload_dir(fs, source, "s3://logs/capsules")
        rs.upload_dir(fs, dumps.make_dump("clean_mlp"), "s3://logs/train")
        with TensorBoardProcess(str(empty), plugins="dbg", extra_args=("--dbg_logdir", "s3://logs")) as tb:
            frame = open_dashboard(page, tb)
            card = by_testid(frame, "capsule-card")
            card.wait_for(timeout=60_000)  # opens on its own: the run beside it is clean
            wait_text(card, r"step 4 · epoch 0 · batch 4")
            first_sample = by_testid(card, "capsule-samples").locator("tbody tr").first
            wait_text(first_sample, rf"^x\s*{bad}\s*1\s")  # the NaN sample first, read from the bucket
            screenshot(page, "capsule-5-s3-card")
            first_sample.click()
            pane = by_testid(frame, "tensor-values")
            wait_text(pane.locator(".tv-title"), rf"capsule step 4 · batch · x · sample {bad}\s*float32")
            row, col = np.argwhere(np.isnan(x))[0]
            frame.locator(f"[data-testid=tv-grid] .vg-cell.vg-focus[data-index='{row},{col}']").wait_for(timeout=10_000)
            href = by_testid(frame, "tv-download").get_attribute("href") or ""
            assert "capsule_array.npy?" in href, href
            got = page.request.get(tb.url + API + href[href.index("capsule_array.npy") :])
            assert got.status == 200 and got.body() == member
            screenshot(page, "capsule-6-s3-sample")
            assert_no_console_errors(page)
    assert not guard.violations, guard.violations


def test_a_logdir_holding_only_an_unreplayed_capsule_opens_on_its_card(page, tmp_path):
    """#36: right after training stopped on a NaN (tests/programs/capsule_speaks.py, not replayed yet), TensorBoard on
    the capsule folder lists the Debugger as active, and the Debugger opens on the capsule's card with a status line
    that says what to do — not "No tfdbg2 dump found" over empty panels."""
    logdir = tmp_path / "capsules"
    shutil.copytree(os.path.join(dumps.make_dump("capsule_speaks"), "capsules"), logdir)
    with TensorBoardProcess(str(logdir)) as tb:
        assert tb.get_json("/data/plugins_listing")["dbg"]["enabled"] is True
        frame = open_dashboard(page, tb)
        panel = by_testid(frame, "capsules-panel")
        card = by_testid(panel, "capsule-card")
        card.wait_for(timeout=30_000)  # open without a click
        wait_text(card, r"step 11 · epoch 1 · batch 3")
        wait_text(by_testid(card, "capsule-verdict"), r"replay: not replayed yet")
        status = by_testid(frame, "status")
        # the folder only (no `--`, nothing from the manifest): pasted, replay shows the recorded program and asks
        wait_text(status, r"1 NaN capsule, not replayed: run \S+ -m tensorboard_plugin_dbg replay \S*capsule-step0+11$")
        assert "No tfdbg2 dump found" not in status.inner_text()
        # the command the status line gives is the card's
        assert by_testid(card, "capsule-command").inner_text() in status.inner_text()
        # the per-sample loss at the trigger names the row; a click opens that sample of x in Tensor Values
        wait_text(by_testid(card, "capsule-loss"), r"per-sample loss: row 5 is non-finite \(NaN\) of 8")
        for width, height in ((1440, 900), (1024, 768)):  # the card at a wide and a narrow window, then dark
            page.set_viewport_size({"width": width, "height": height})
            screenshot(page, f"capsule-4-only-capsule-{width}")
        page.evaluate("document.body.classList.add('dark-mode')")  # TensorBoard's dark theme, followed by the plugin
        frame.wait_for_function("document.body.classList.contains('dbg-dark')", timeout=5000)
        screenshot(page, "capsule-4-only-capsule-dark")
        first = by_testid(card, "capsule-loss-row").first
        wait_text(first, r"^5\s*NaN")
        first.click()
        pane = by_testid(frame, "tensor-values")
        wait_text(pane.locator(".tv-title"), r"capsule step 11 · batch · x · sample 5\s*float32")
        assert_no_console_errors(page)


@pytest.mark.parametrize("newer", [True, False], ids=["capsule-newer", "capsule-older"])
def test_the_dashboard_lands_on_a_capsule_newer_than_every_runs_first_nan(page, tmp_path, newer):
    """#36: a logdir holding a run dump with a NaN (tests/programs/nan_keras.py) and a capsule not replayed: the
    capsule captured after the run's first NaN (its manifest's `created` against the dump's `wall_time`) opens the
    Debugger on its card; captured before it, the dashboard lands on the run's root cause as without capsules."""
    logdir = tmp_path / "logdir"
    shutil.copytree(dumps.make_dump("nan_keras"), logdir / "run")
    shutil.copytree(os.path.join(dumps.make_dump("capsule_speaks"), "capsules"), logdir / "capsules")
    (folder,) = (logdir / "capsules").iterdir()
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["created"] = "2100-01-01T00:00:00+00:00" if newer else "2000-01-01T00:00:00+00:00"  # around the dump's
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with TensorBoardProcess(str(logdir)) as tb:
        frame = open_dashboard(page, tb)
        panel = by_testid(frame, "capsules-panel")
        frame.wait_for_function(
            "document.querySelector('[data-testid=capsules-panel]').dataset.landing !== undefined", timeout=60_000
        )
        # asked after the landing (which waits for the runs to be read): at start the catalog may list none yet
        runs = tb.get_json(API + "runs")["runs"]
        assert [r["name"] for r in runs] == ["run"]
        first_nan = runs[0]["summary"]["first_nan"]["wall_time"]
        assert 946684800 < first_nan < 4102444800  # the dump's first NaN lies between the two capsule times
        assert panel.get_attribute("data-landing") == ("capsules" if newer else "runs")
        if newer:
            wait_text(by_testid(panel, "capsule-card"), r"step 11 · epoch 1 · batch 3")
            screenshot(page, "capsule-7-landing-newer")
        else:
            assert panel.is_hidden()
            wait_text(by_testid(frame, "root-cause"), r"Root cause:", timeout_ms=30_000)
            assert by_testid(frame, "capsules-open").inner_text() == "Capsules (1)…"
        assert_no_console_errors(page)

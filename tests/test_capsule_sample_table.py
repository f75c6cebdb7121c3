"""The capsule's per-sample table (#36), one batch array at a time (route `capsule_samples`): x rows and y rows never
mixed, min / negatives / zeros beside the non-finite count, the rows the replay's root cause points at first and
marked, paged without a Python object per sample (a batch of 100 k samples)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from werkzeug.test import Client

from tensorboard_plugin_dbg.analysis import capsule_sample_table
from tensorboard_plugin_dbg.capsule import writer
from tests import dumps
from tests.api_helpers import get, make_app, ok, url, wait_indexed


def test_the_columns_count_per_sample_over_finite_values():
    x = np.array([[1.0, -2.0, 0.0], [np.nan, np.inf, -np.inf], [0.0, 0.0, 3.0], [-1.0, np.nan, 5.0]], np.float32)
    cols = capsule_sample_table.columns(x)
    assert cols["nonfinite"].tolist() == [0, 3, 0, 1]
    assert cols["negatives"].tolist() == [1, 0, 0, 1] and cols["zeros"].tolist() == [1, 0, 2, 0]
    assert cols["min"][[0, 2, 3]].tolist() == [-2.0, 0.0, -1.0] and np.isnan(cols["min"][1])
    assert cols["max_abs"][[0, 2, 3]].tolist() == [2.0, 3.0, 5.0] and np.isnan(cols["max_abs"][1])
    ints = capsule_sample_table.columns(np.array([3, -1, 0]))  # labels: one element per sample
    assert ints["min"].tolist() == [3.0, -1.0, 0.0] and ints["negatives"].tolist() == [0, 1, 0]


def big_capsule(tmp_path, samples: int) -> str:
    x = np.ones((samples, 4), np.float32)
    x[min(77_777, samples - 1), 2] = np.nan
    x[123, 0] = -5.0
    batch = {"x": x, "y": np.zeros(samples, np.int64)}
    manifest = {"step": 3, "trigger": {"kind": "loss", "name": "loss", "health": {}}, "batch_structure": {}}
    groups = {"batch": batch, "weights": {}, "optimizer": {}, "rng": {}}
    return writer.write_capsule(str(tmp_path / "capsules"), "capsule-step000000003", manifest, groups)


def test_a_batch_of_100k_samples_pages_without_a_python_object_per_sample(tmp_path):
    big_capsule(tmp_path, 100_000)
    logdir = str(tmp_path / "capsules")
    tracemalloc.start()
    try:
        answer = capsule_sample_table.page(logdir, "capsule-step000000003", "x", 0, 50, None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert answer["total"] == 100_000 and len(answer["rows"]) == 50 and answer["arrays"] == ["x", "y"]
    assert answer["rows"][0]["sample"] == 77_777 and answer["rows"][0]["nonfinite"] == 1  # the bad one first
    assert answer["rows"][1]["sample"] == 123 and answer["rows"][1]["min"] == -5.0  # then by max |x|
    assert [r["sample"] for r in answer["rows"][2:5]] == [0, 1, 2] and answer["marked"] == 0
    assert peak < 24 * 2**20, peak  # 100 k dicts alone would be ~60 MB; the columns are ~5 MB
    last = capsule_sample_table.page(logdir, "capsule-step000000003", "x", 99_990, 100_000, None)
    assert len(last["rows"]) == 10 and last["rows"][-1]["sample"] == 99_999


def test_the_route_pages_each_array_apart_and_refuses_what_is_not_there(tmp_path):
    big_capsule(tmp_path, 2_000)
    client = Client(make_app(str(tmp_path / "capsules"))[0])
    y = ok(client, "capsule_samples", capsule="capsule-step000000003", array="y", begin=0, end=5)
    assert y["array"] == "y" and y["total"] == 2_000 and all(r["nonfinite"] == 0 for r in y["rows"])
    status, _, body = get(client, url("capsule_samples", capsule="capsule-step000000003", array="w", begin=0, end=5))
    assert status == 404 and "w" in body["error"]["message"]
    status, _, body = get(client, url("capsule_samples", capsule="../x", array="x", begin=0, end=5))
    assert status == 404
    status, _, body = get(client, url("capsule_samples", capsule="capsule-step000000003", array="x", begin=0, end=5000))
    assert status == 400 and body["error"]["code"] == "page_too_large"


@pytest.mark.slow
def test_after_a_replay_the_rows_the_root_cause_names_are_first_and_marked(tmp_path):
    """capsule_speaks.py --case log: x[5, 3] = -2.0 goes into Log; the replay's root cause says so, and the table of x
    marks sample 5 (and only it), the table of y marks nothing."""
    folder = tmp_path / "capsules"
    shutil.copytree(os.path.join(dumps.make_dump("capsule_speaks", "--case", "log"), "capsules"), folder)
    command = [sys.executable, "-m", "tensorboard_plugin_dbg", "replay", str(folder), "--"]
    command += [sys.executable, dumps.program_path("capsule_speaks"), str(tmp_path / "out"), "--case", "log"]
    proc = subprocess.run(command, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    client = Client(make_app(str(folder))[0])
    wait_indexed(client)
    (card,) = ok(client, "capsules")["capsules"]
    x = ok(client, "capsule_samples", capsule=card["path"], array="x", begin=0, end=8)
    assert x["marked"] == 1 and x["rows"][0]["sample"] == 5 and x["rows"][0]["marked"]
    assert x["rows"][0]["negatives"] == 1 and x["rows"][0]["min"] == -2.0
    assert "received x[5, 3] = -2.0" in x["marked_by"] and not any(r["marked"] for r in x["rows"][1:])
    y = ok(client, "capsule_samples", capsule=card["path"], array="y", begin=0, end=8)
    assert y["marked"] == 0 and y["marked_by"] is None and len(y["rows"]) == 8

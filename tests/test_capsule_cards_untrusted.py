"""Boundary: capsules in the logdir written by someone else (docs/THREAT_MODEL.md). One bad capsule is one damaged
card that says why; the others stay: a batch member whose header claims a giant shape (MemoryError when read) and a
manifest nested 5,000 deep (RecursionError) answered 500 for the whole `capsules` route on fda0946."""

from __future__ import annotations

import io
import json
import os
import shutil
import tracemalloc
import zipfile

import numpy as np
import pytest
from werkzeug.test import Client

from tensorboard_plugin_dbg import capsule
from tensorboard_plugin_dbg.analysis import capsule_summary
from tensorboard_plugin_dbg.capsule import writer
from tensorboard_plugin_dbg.reader import capsule_files
from tests import dumps
from tests.api_helpers import get, load_schema, make_app, ok, schema_errors, url

pytestmark = pytest.mark.slow


def _npy_claiming(shape: tuple[int, ...]) -> bytes:
    """A .npy member whose header claims `shape` (float64) and holds 8 bytes of data."""
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return out.getvalue() + b"\0" * 8


def _rewrite_batch(folder: str, member: bytes, group: str = "batch", name: str = "x", deflate: bool = False) -> None:
    """The group's .npz holding one member NAME (the manifest's byte count updated to match)."""
    path = os.path.join(folder, f"{group}.npz")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED) as z:
        z.writestr(f"{name}.npy", member)
    manifest_path = os.path.join(folder, capsule_files.MANIFEST)
    with open(manifest_path) as f:
        manifest = json.load(f)
    manifest["files"][group]["bytes"] = os.path.getsize(path)
    with open(manifest_path, "w") as f:
        json.dump(manifest, f)


def test_one_bad_capsule_is_one_damaged_card(tmp_path):
    source = capsule.load(os.path.join(dumps.make_dump("capsule_fit"), "capsules")).path
    for name in ("a-sound", "b-giant-shape", "c-deep-manifest", "d-zip-bomb"):
        shutil.copytree(source, tmp_path / name)
    _rewrite_batch(str(tmp_path / "b-giant-shape"), _npy_claiming((10**7, 10**7)))
    bomb = _npy_claiming((2**23,))[:-8] + bytes(2**26)  # 64 MiB of zeros: about 64 kB deflated
    _rewrite_batch(str(tmp_path / "d-zip-bomb"), bomb, deflate=True)
    with open(tmp_path / "c-deep-manifest" / capsule_files.MANIFEST, "w") as f:
        f.write('{"format": "tbdbg-nan-capsule", "format_version": 1, "x": ' + "[" * 5000 + "]" * 5000 + "}")
    app, plugin = make_app(str(tmp_path))
    try:
        answer = ok(Client(app), "capsules")
    finally:
        plugin.catalog().stop()
    assert schema_errors(load_schema(), "CapsulesResponse", answer) == []
    cards = {card["path"]: card for card in answer["capsules"]}
    assert cards["a-sound"]["status"] == "ok"
    assert cards["b-giant-shape"]["status"] == "damaged" and "batch.npz" in cards["b-giant-shape"]["error"]
    assert cards["c-deep-manifest"]["status"] == "damaged" and "nested" in cards["c-deep-manifest"]["error"]
    assert cards["d-zip-bomb"]["status"] == "damaged" and "inflate" in cards["d-zip-bomb"]["error"], cards
    assert os.path.getsize(tmp_path / "d-zip-bomb" / "batch.npz") < 2 << 20


@pytest.mark.parametrize(
    ("shape", "deflate"),
    [
        ((2**62, 4), False),  # the int64 product wraps to 0: matched an empty member, then answered 500
        ((10**6, 10**6), True),  # a compressed member claiming 10^12 elements: MemoryError, 500
        ((10**6, 10**6), False),
    ],
)
def test_a_crafted_member_header_is_a_404_naming_the_file(tmp_path, shape, deflate):
    source = capsule.load(os.path.join(dumps.make_dump("capsule_fit"), "capsules")).path
    shutil.copytree(source, tmp_path / "cap")
    member = _npy_claiming(shape)[:-8] if shape == (2**62, 4) else _npy_claiming(shape)
    _rewrite_batch(str(tmp_path / "cap"), member, "weights", "dense/kernel", deflate)
    app, plugin = make_app(str(tmp_path))
    try:
        client = Client(app)
        status, _, body = get(client, url("capsule_array", capsule="cap", group="weights", name="dense/kernel"))
        cards = ok(client, "capsules")["capsules"]
    finally:
        plugin.catalog().stop()
    assert status == 404 and "weights.npz" in body["error"]["message"], body
    assert [c["status"] for c in cards] == ["damaged"] and "weights.npz" in cards[0]["error"], cards


def test_a_capsule_behind_a_folder_link_is_neither_listed_nor_served(tmp_path):
    """#37 item 10: the cards never followed a folder link; capsule_array served a capsule through one. Now neither
    does (README: folder links inside the logdir are not followed; the files of a listed capsule are read as named)."""
    source = capsule.load(os.path.join(dumps.make_dump("capsule_fit"), "capsules")).path
    shutil.copytree(source, tmp_path / "logdir" / "real")
    os.symlink(tmp_path / "logdir" / "real", tmp_path / "logdir" / "linked")
    app, plugin = make_app(str(tmp_path / "logdir"))
    try:
        client = Client(app)
        cards = ok(client, "capsules")["capsules"]
        linked, _, body = get(client, url("capsule_array", capsule="linked", group="batch", name="x"))
        real, _, _ = get(client, url("capsule_array", capsule="real", group="batch", name="x"))
    finally:
        plugin.catalog().stop()
    assert [c["path"] for c in cards] == ["real"]
    assert (linked, real) == (404, 200) and "symbolic link" in body["error"]["message"], body


@pytest.mark.parametrize("n", [1_000_000, 4_000_000])
def test_a_batch_of_a_million_samples_is_a_card_in_bounded_memory(tmp_path, n):
    """#37 item 4: the per-sample table was one Python dict per sample to send 50 (1 M samples: +727 MB here), then
    numpy columns of the whole batch (149 MB). The arrays are now read where they lie, block by block, the top rows
    merged block by block: the bad sample first, the total counted, the same peak for 4 M samples as for 1 M."""
    x = np.ones((n, 1), np.float32)
    x[777_777, 0] = np.nan
    x[5, 0] = -3.0
    manifest = {
        "step": 1,
        "trigger": {"kind": "loss", "name": "loss"},
        "batch_structure": {"kind": "array", "name": "x"},
    }
    groups = {"batch": {"x": x, "y": np.zeros(n, np.int8)}, "weights": {}, "optimizer": {}, "rng": {}}
    folder = writer.write_capsule(str(tmp_path), "cap", manifest, groups)
    del x, groups
    tracemalloc.start()
    try:
        card = capsule_summary.summary(folder, str(tmp_path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert card["status"] == "ok", card
    assert card["samples_total"] == 2 * n and len(card["samples"]) == capsule_summary.SAMPLES_SHOWN
    assert card["samples"][0] == {"array": "x", "sample": 777_777, "nonfinite": 1, "max_abs": 0.0}
    assert card["samples"][1] == {"array": "x", "sample": 5, "nonfinite": 0, "max_abs": 3.0}
    # a block's worth (capsule_samples.SAMPLE_BLOCK elements and their columns): 149 MB for 1 M samples and 585 MB
    # for 4 M at d3721ef (VmHWM, bench/capsule_cards.py), 727 MB for 1 M on fda0946
    assert peak < 24 << 20, peak

"""Boundary: capsules in the logdir written by someone else (docs/THREAT_MODEL.md). One bad capsule is one damaged
card that says why; the others stay: a batch member whose header claims a giant shape (MemoryError when read) and a
manifest nested 5,000 deep (RecursionError) answered 500 for the whole `capsules` route on fda0946."""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile

import numpy as np
import pytest
from werkzeug.test import Client

from tensorboard_plugin_dbg import capsule
from tensorboard_plugin_dbg.reader import capsule_files
from tests import dumps
from tests.api_helpers import load_schema, make_app, ok, schema_errors

pytestmark = pytest.mark.slow


def _npy_claiming(shape: tuple[int, ...]) -> bytes:
    """A .npy member whose header claims `shape` (float64) and holds 8 bytes of data."""
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return out.getvalue() + b"\0" * 8


def _rewrite_batch(folder: str, member: bytes) -> None:
    path = os.path.join(folder, "batch.npz")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("x.npy", member)
    manifest_path = os.path.join(folder, capsule_files.MANIFEST)
    with open(manifest_path) as f:
        manifest = json.load(f)
    manifest["files"]["batch"]["bytes"] = os.path.getsize(path)
    with open(manifest_path, "w") as f:
        json.dump(manifest, f)


def test_one_bad_capsule_is_one_damaged_card(tmp_path):
    source = capsule.load(os.path.join(dumps.make_dump("capsule_fit"), "capsules")).path
    for name in ("a-sound", "b-giant-shape", "c-deep-manifest"):
        shutil.copytree(source, tmp_path / name)
    _rewrite_batch(str(tmp_path / "b-giant-shape"), _npy_claiming((10**7, 10**7)))
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

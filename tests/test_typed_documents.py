"""#40 item 4: the capsule manifest, the replay verdict and the compare document are typed once
(reader/capsule_manifest.py, analysis/compare/document.py) with their format versions; `dict[str, Any]` is left
where a value is open by nature (WSGI's environ, an OpenAPI document, TensorFlow objects in the training process),
each with its reason, and the package holds at most 15 (87 at d3721ef, 12 now). The manifest's type tolerates
fields a newer writer adds."""

from __future__ import annotations

import json
import pathlib

import numpy as np

from tensorboard_plugin_dbg.analysis import capsule_summary
from tensorboard_plugin_dbg.analysis.compare import document
from tensorboard_plugin_dbg.capsule import writer
from tensorboard_plugin_dbg.reader import capsule_files, capsule_manifest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "tensorboard_plugin_dbg"
MOST = 15


def _open_dicts() -> list[tuple[str, int, str, str]]:
    """(file, line number, line, the line above) of every `dict[str, Any]` in the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if "dict[str, Any]" in line:
                found.append((str(path.relative_to(PACKAGE)), i + 1, line, lines[i - 1] if i else ""))
    return found


def test_at_most_fifteen_open_dicts_each_with_its_reason():
    found = _open_dicts()
    assert len(found) <= MOST, [f"{f}:{n}" for f, n, _, _ in found]
    unexplained = [f"{f}:{n}" for f, n, line, above in found if "#" not in line and not above.strip().startswith("#")]
    assert unexplained == []


def test_the_format_versions_are_declared_once():
    assert capsule_files.FORMAT_VERSION is capsule_manifest.FORMAT_VERSION
    assert capsule_files.FORMAT is capsule_manifest.FORMAT
    assert "format_version" in document.CompareDocument.__annotations__
    assert document.DOCUMENT_VERSION == 1


def test_a_field_a_newer_writer_adds_is_carried_and_ignored(tmp_path):
    """w35's writers add optional fields (per-layer history, ...): the reader keeps them in the manifest it returns
    and the card is built as before."""
    manifest = {
        "step": 2,
        "trigger": {"kind": "loss", "name": "loss", "health": {"size": 1, "nan": 1}, "new_trigger_field": [1]},
        "batch_structure": {"kind": "array", "name": "x"},
        "a_field_from_the_future": {"nested": True},
    }
    groups = {"batch": {"x": np.ones((3, 2), np.float32)}, "weights": {}, "optimizer": {}, "rng": {}}
    folder = writer.write_capsule(str(tmp_path), "cap", manifest, groups)
    read = capsule_files.read_manifest(folder)
    assert read["format_version"] == capsule_manifest.FORMAT_VERSION
    assert json.loads(json.dumps(read))["a_field_from_the_future"] == {"nested": True}
    card = capsule_summary.summary(folder, str(tmp_path))
    assert card["status"] == "ok" and card["trigger"]["health"]["nan"] == 1, card
    assert set(read) - set(capsule_manifest.Manifest.__annotations__) == {"a_field_from_the_future"}

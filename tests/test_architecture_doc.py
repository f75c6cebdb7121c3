"""docs/ARCHITECTURE.md and docs/recipes/ stay a short, true map (issue #40 item 7): every path they name exists, the
map's list of module-level locks is the package's (no more, no fewer), and the map stays under 1,500 words."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tensorboard_plugin_dbg"
MAP = ROOT / "docs" / "ARCHITECTURE.md"
RECIPES = sorted((ROOT / "docs" / "recipes").glob("*.md"))
DOCS = [MAP, *RECIPES]
# Where a path in backquotes may be rooted: the checkout, the package, the frontend's sources.
BASES = (ROOT, PACKAGE, ROOT / "frontend" / "src", ROOT / "frontend" / "src" / "controller")
# A path in backquotes: a file with one of these suffixes or a folder (a trailing slash); `a.py: name` names one.
PATH = re.compile(r"`([\w./-]+(?:\.(?:py|ts|json|md|mjs|sh|toml)|/))(?::[^`]*)?`")
LOCK = re.compile(r"`([\w/]+\.py): (\w+)`")


def _paths(doc: Path) -> list[str]:
    return [p for p in PATH.findall(doc.read_text()) if "<" not in p and "*" not in p]


def test_the_check_finds_paths_and_locks():
    sample = "`reader/tfrecord.py`, `docs/recipes/`, `x.py: _lock`, `a <b>.py`"
    assert PATH.findall(sample) == ["reader/tfrecord.py", "docs/recipes/", "x.py"]
    assert LOCK.findall(sample) == [("x.py", "_lock")]


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_every_path_named_exists(doc):
    paths = _paths(doc)
    assert len(paths) >= 10, paths  # the doc does name files: the check is looking
    missing = [p for p in paths if not any((base / p).exists() for base in BASES)]
    assert missing == []


def _module_locks() -> set[tuple[str, str]]:
    """(path under the package, name) of every module-level `name = threading.Lock()` / `RLock()`."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.parse(path.read_text()).body:
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
                continue
            if value.func.attr in ("Lock", "RLock"):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                rel = path.relative_to(PACKAGE).as_posix()
                found |= {(rel, t.id) for t in targets if isinstance(t, ast.Name)}
    return found


def test_the_map_lists_every_module_level_lock():
    listed = set(LOCK.findall(MAP.read_text()))
    assert len(_module_locks()) >= 6
    assert listed == _module_locks()


def test_the_map_reads_in_ten_minutes():
    words = len(MAP.read_text().split())
    assert 300 < words <= 1500, words
    lines = MAP.read_text().splitlines()  # prose wrapped at 120; a table row may run to 300
    assert max(len(line) for line in lines if not line.startswith("|")) <= 120
    assert max(len(line) for line in lines) <= 300


@pytest.mark.parametrize("recipe", ["new-alert-rule.md", "new-route-with-panel.md", "new-capsule-field.md"])
def test_each_recipe_lists_its_files_in_order(recipe):
    text = (ROOT / "docs" / "recipes" / recipe).read_text()
    steps = re.findall(r"^(\d+)\. ", text, re.M)
    assert [int(s) for s in steps] == list(range(1, len(steps) + 1)) and len(steps) >= 5
    assert f"docs/recipes/{recipe}" in MAP.read_text()  # the map points to it

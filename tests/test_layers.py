"""The package's layers import one way: wire < reader < index < analysis < api < plugin/CLI.

The training-side code (it runs inside the user's training program: `capsule/`, the JAX writer `jax/`) stands beside
the viewer's layers, not on top of them: it may import `wire/` and `reader/` only (and itself), and no viewer layer
imports it (the viewer needs neither TensorFlow nor JAX). Every subpackage is filed in one of these places: a new one
is refused until it is (a writer in `wire/` is held by the wire rule: it imports nothing of the package).

Every import is counted, wherever it stands: module level, inside a function (a lazy import that dodges a cycle is
still an edge), and `importlib.import_module("...")` by name. No module may import from a layer above its own, the
module graph has no cycle, and no module reaches into another layer's private members by name
(`getattr(x, "_private")`, `hasattr(x, "_private")`).
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest

PACKAGE = "tensorboard_plugin_dbg"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE
# wire/: the generated wire types (scripts/gen_wire_types.py), the bottom layer every layer may import
LAYERS = {"wire": 0, "reader": 1, "index": 2, "analysis": 3, "api": 4}
TOP = 5  # plugin.py, __main__.py, the *_cli.py and replay_*.py modules, demo/, process_tuning.py, static_files.py
TOP_PACKAGES = {"demo", "static"}
# Code that runs in the training process, and the only layers it may import besides its own package.
# writer/: the tfdbg2 writer without TensorFlow that the JAX code (and any framework) writes dumps with.
TRAINING_SIDE = {"capsule", "jax", "writer"}
TRAINING_MAY_IMPORT = {"wire", "reader", "writer"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.get(parts[1], TOP) if len(parts) > 1 else TOP


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _imports(path: Path) -> list[tuple[str, int, str]]:
    """(imported module, line, how) for every import of the package's own modules in `path`."""
    module = _module_name(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno, "import") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node.level, node.module)
            found.append((target, node.lineno, "from"))
            # `from pkg import module` names a module: count it as an edge to that module
            found += [(f"{target}.{a.name}", node.lineno, "from") for a in node.names]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
                found.append((str(node.args[0].value), node.lineno, "importlib"))
    return [(m, line, how) for m, line, how in found if m == PACKAGE or m.startswith(PACKAGE + ".")]


def _graph() -> dict[str, list[tuple[str, int, str]]]:
    files = {_module_name(p): p for p in ROOT.rglob("*.py") if "static" not in p.parts}
    graph: dict[str, list[tuple[str, int, str]]] = {}
    for module, path in files.items():
        edges = []
        for target, line, how in _imports(path):
            while target not in files and "." in target:  # `from pkg.mod import name`: the edge is to pkg.mod
                target = target.rsplit(".", 1)[0]
            if target in files and target != module and not (module.startswith(target + ".") and how == "from"):
                edges.append((target, line, how))
        graph[module] = edges
    return graph


def test_the_check_sees_every_kind_of_import(tmp_path, monkeypatch):
    pkg = tmp_path / PACKAGE
    (pkg / "index").mkdir(parents=True)
    (pkg / "analysis").mkdir()
    for d in (pkg, pkg / "index", pkg / "analysis"):
        (d / "__init__.py").write_text("")
    (pkg / "index" / "a.py").write_text(
        "import importlib\n"
        "def f():\n    from ..analysis import b\n"
        "def g():\n    return importlib.import_module('tensorboard_plugin_dbg.analysis.c')\n"
    )
    (pkg / "analysis" / "b.py").write_text("from tensorboard_plugin_dbg.index import a\n")
    (pkg / "analysis" / "c.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", pkg)
    graph = _graph()
    targets = {t for t, _, _ in graph[f"{PACKAGE}.index.a"]}
    assert {f"{PACKAGE}.analysis.b", f"{PACKAGE}.analysis.c"} <= targets
    assert _upward(graph) and _cycles(graph)
    assert len(_private_reaches(ast.parse("getattr(run, '_rows')\nrun._table()\nself._ok\n"))) == 2


def _upward(graph) -> list[str]:
    return [
        f"{m}:{line} ({how}) imports {t}, a higher layer"
        for m, edges in graph.items()
        for t, line, how in edges
        if _layer(t) > _layer(m)
    ]


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w, _, _ in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_upward_import():
    assert _upward(_graph()) == []


def test_the_wire_layer_imports_nothing_of_the_package():
    """wire/ sits below reader/: generated types only, importing no other module of the package."""
    graph = _graph()
    wire = [m for m in graph if _layer(m) == LAYERS["wire"]]
    assert f"{PACKAGE}.wire.types" in wire
    assert [(m, t) for m in wire for t, _, _ in graph[m] if _layer(t) != LAYERS["wire"]] == []


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS.keys() | TRAINING_SIDE) else ""


def _training_side_breaches(graph) -> list[str]:
    """Training-side modules importing beyond wire/reader/their own package, and viewer layers importing them."""
    out: dict[str, str] = {}  # one per import statement (`from pkg import mod` is two edges)
    for m, edges in graph.items():
        for t, line, how in edges:
            mine, theirs = _package(m), _package(t)
            if mine in TRAINING_SIDE and theirs != mine and theirs not in TRAINING_MAY_IMPORT:
                out[f"{m}:{line}"] = f"{m}:{line} ({how}) imports {t}: training-side code uses wire/, reader/ only"
            if mine in LAYERS and theirs in TRAINING_SIDE:
                out[f"{m}:{line}"] = f"{m}:{line} ({how}) imports {t}: the viewer does not import training-side code"
    return sorted(out.values())


def test_training_side_code_uses_wire_and_reader_only():
    graph = _graph()
    assert f"{PACKAGE}.capsule.watch" in graph  # the rule is looking at the capsule code
    assert _training_side_breaches(graph) == []


def test_every_subpackage_is_filed():
    """A new subpackage (say a writer for another framework) must be filed as a layer or as training-side code."""
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages - LAYERS.keys() - TRAINING_SIDE - TOP_PACKAGES == set()


def test_the_training_side_check_sees_a_breach(tmp_path, monkeypatch):
    pkg = tmp_path / PACKAGE
    for sub in ("capsule", "jax", "reader", "api", "analysis"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "capsule" / "watch.py").write_text("from ..reader import r\nfrom . import w\n")
    (pkg / "capsule" / "w.py").write_text("")
    (pkg / "reader" / "r.py").write_text("")
    (pkg / "jax" / "writer.py").write_text("from tensorboard_plugin_dbg.api import app\n")
    (pkg / "api" / "app.py").write_text("")
    (pkg / "analysis" / "a.py").write_text("def f():\n    from ..capsule import watch\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", pkg)
    breaches = _training_side_breaches(_graph())
    assert len(breaches) == 2, breaches
    assert "jax.writer:1" in breaches[0] + breaches[1] and "analysis.a:2" in breaches[0] + breaches[1]


def test_no_import_cycle():
    assert _cycles(_graph()) == []


def _private_reaches(tree: ast.AST, above_index: bool = True) -> list[str]:
    """getattr/hasattr/setattr of a private name, and, above the index, `run._private` (the run is the index's
    object: the layers above reach it through its protocol only)."""
    by_name = [
        f"line {node.lineno}: {node.func.id}(..., {node.args[1].value!r})"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "hasattr", "setattr")
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and str(node.args[1].value).startswith("_")
        and not str(node.args[1].value).startswith("__")
    ]
    on_run = [
        f"line {node.lineno}: run.{node.attr}"
        for node in ast.walk(tree)
        if above_index
        and isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "run"
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
    ]
    return by_name + on_run


@pytest.mark.parametrize("path", sorted(ROOT.rglob("*.py")), ids=lambda p: os.path.relpath(p, ROOT))
def test_no_private_member_by_name(path):
    above_index = _layer(_module_name(path)) > LAYERS["index"]
    assert _private_reaches(ast.parse(path.read_text()), above_index) == []

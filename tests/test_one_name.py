"""#40 item 5 (the backend's names): one name per thing. A package module is never imported under the name of
another package module (api/routes/capsules.py imported analysis/capsule_array.py as `capsule_arrays`, the name of
reader/capsule_arrays.py), and routes share parameters by name, not by a route's position in another table
(`compare_route.ROUTES[0].params_named(...)`)."""

from __future__ import annotations

import ast
import pathlib

from tensorboard_plugin_dbg.api.routes import compare, compare_rows, compare_values

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "tensorboard_plugin_dbg"


def _sources() -> list[tuple[pathlib.Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(PACKAGE.rglob("*.py"))]


def test_no_module_is_imported_under_another_modules_name():
    modules = {p.stem for p in PACKAGE.rglob("*.py")} | {p.name for p in PACKAGE.rglob("*") if p.is_dir()}
    misnamed = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (
                node.level or (node.module or "").startswith("tensorboard_plugin")
            ):
                for alias in node.names:
                    parent = (node.module or "").rsplit(".", 1)[-1]  # `wire.types as wire`: its own package
                    if alias.asname and alias.asname not in (alias.name, parent) and alias.asname in modules:
                        misnamed.append(f"{path.relative_to(PACKAGE)}: {alias.name} as {alias.asname}")
    assert misnamed == []


def test_routes_share_parameters_by_name_not_by_position():
    by_position = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "ROUTES":
                by_position.append(str(path.relative_to(PACKAGE)))
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "ROUTES"
            ):
                by_position.append(str(path.relative_to(PACKAGE)))
    assert by_position == []
    shared = {id(p) for p in (*compare.PAIR, *compare.TOLERANCES)}
    for route in (*compare_rows.ROUTES, *compare_values.ROUTES):
        names = {p.name: p for p in route.params}
        assert all(id(names[p.name]) in shared for p in (*compare.PAIR, *compare.TOLERANCES)), route.name

"""Generates `tensorboard_plugin_dbg/wire/types.py` from the one wire schema (`api/wire_schema.json`, itself made
from `frontend/src/api/wire.ts` by `npm run schema`), so the Python side is typed from the same source as the
TypeScript side: one `TypedDict` per object definition, `Literal` unions for string enums and constants, unions for
`anyOf` and nullable types, `list[...]` for arrays, `dict[str, ...]` for maps.

A definition with fields that a layer above adds (ADDED_ABOVE: `run` on every route answer, ...) also gets
`<Name>Body`, the same keys without them: what the layer below returns; `<Name>` extends it. An object nested in a
property (no name of its own in the schema) is named after its place: `<Parent><Property>` (`Item` appended for an
array's items).

Pure Python, no network, deterministic: `tests/test_contract.py` compares the committed file with a fresh run.

    python scripts/gen_wire_types.py            # writes the file
    python scripts/gen_wire_types.py --stdout   # prints it
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "tensorboard_plugin_dbg" / "api" / "wire_schema.json"
TARGET = ROOT / "tensorboard_plugin_dbg" / "wire" / "types.py"
COMMAND = "python scripts/gen_wire_types.py"
LINE = 120  # ruff's line-length (pyproject.toml)
# Fields a layer adds to what the layer below returns: key -> the definitions it is added to (None: every definition
# requiring it). `run`: the route, on every route answer; `summary`: the `runs` route, on each RunInfo of the index;
# `index`: analysis/alerts.py, on each rule finding (its position in the alert list); `graph_name`, `device`:
# analysis/run_verdict.py, on the cached root cause's producer; `report_text`: the `root_cause` route.
ADDED_ABOVE: dict[str, frozenset[str] | None] = {
    "run": None,
    "summary": frozenset({"RunInfo"}),
    "index": frozenset({"Alert"}),
    "graph_name": frozenset({"RootCauseProducer"}),
    "device": frozenset({"RootCauseProducer"}),
    "report_text": frozenset({"RootCauseResponse"}),
}
PRIMITIVES = {"number": "float", "string": "str", "boolean": "bool", "null": "None"}

HEADER = f'''"""The wire types (every JSON answer of the API) as Python types, from `api/wire_schema.json`.

Generated — do not edit; run `{COMMAND}` (tests/test_contract.py fails when this file is stale).
The bottom layer: every layer may import it, it imports nothing of the package. A `<Name>Body` is `<Name>` without
the fields a layer above adds (ADDED_ABOVE in the generator: `run`, ...): what the layer below returns.
`Num` is a float that may be non-finite: Python code holds a float, the one JSON encoder spells NaN/±Inf as strings.
"""

from typing import Literal, TypeAlias

from typing_extensions import NotRequired, TypedDict
'''

Schema = dict[str, Any]


class Generator:
    """Walks the definitions; `blocks` maps each emitted name to its source text, `deps` to the names it uses."""

    def __init__(self, definitions: dict[str, Schema]) -> None:
        self.definitions = definitions
        self.blocks: dict[str, str] = {}
        self.deps: dict[str, set[str]] = {}
        self.order: list[str] = []  # names in the order they were made (schema order, nested objects after)

    def run(self) -> str:
        for name, schema in self.definitions.items():
            self.define(name, schema)
        blocks = [self.blocks[name] + "\n" for name in self.sorted_names()]
        after_imports = "\n\n" if blocks[0].startswith("class ") else "\n"  # as ruff's isort spaces them
        return HEADER + after_imports + "\n\n".join(blocks)

    def sorted_names(self) -> list[str]:
        """Every name after the names it uses (runtime annotations are evaluated at class creation)."""
        done: list[str] = []
        seen: set[str] = set()

        def visit(name: str, path: tuple[str, ...]) -> None:
            if name in seen:
                return
            if name in path:
                raise SystemExit(f"a cycle of definitions: {' -> '.join(path + (name,))}")
            for dep in sorted(self.deps[name]):
                visit(dep, path + (name,))
            seen.add(name)
            done.append(name)

        for name in self.order:
            visit(name, ())
        return done

    def define(self, name: str, schema: Schema) -> None:
        self.order.append(name)
        self.deps[name] = set()
        if schema.get("type") == "object" and "properties" in schema:
            self.typed_dict(name, schema)
        else:
            self.alias(name, schema)

    def alias(self, name: str, schema: Schema) -> None:
        value = self.type_of(schema, name, "", self.deps[name])
        block = _comment(schema.get("description", "")) + _assign(f"{name}: TypeAlias = ", value)
        self.blocks[name] = block

    def typed_dict(self, name: str, schema: Schema) -> None:
        required = set(schema.get("required", ()))
        properties: dict[str, Schema] = schema["properties"]
        fields = []
        for key, prop in properties.items():
            annotation = self.type_of(prop, name, key, self.deps[name])
            if key not in required:
                annotation = f"NotRequired[{annotation}]"
            fields.append((key, annotation, prop.get("description", "")))
        doc = schema.get("description") or f"wire.ts `{name}` (its schema definition carries no description)."
        added = [k for k, where in ADDED_ABOVE.items() if k in required and (where is None or name in where)]
        if added:
            body = f"{name}Body"
            self.order.append(body)
            self.deps[body] = set(self.deps[name])
            self.deps[name] = {body}
            names = ", ".join(f"`{k}`" for k in added)
            body_doc = f"`{name}` without {names}: what the layer below returns (the one above adds {names})."
            self.blocks[body] = _class(body, "TypedDict", body_doc, [f for f in fields if f[0] not in added])
            self.blocks[name] = _class(name, body, doc, [f for f in fields if f[0] in added])
        else:
            self.blocks[name] = _class(name, "TypedDict", doc, fields)

    def type_of(self, schema: Schema, parent: str, key: str, deps: set[str]) -> str:
        """The Python type of a schema node; nested objects become definitions of their own."""
        if "$ref" in schema:
            ref: str = schema["$ref"].removeprefix("#/definitions/")
            deps.add(ref)
            return ref
        if "anyOf" in schema:
            return _union([self.type_of(s, parent, key, deps) for s in schema["anyOf"]])
        if "const" in schema:
            return f"Literal[{json.dumps(schema['const'])}]"
        if "enum" in schema:
            return f"Literal[{', '.join(json.dumps(v) for v in schema['enum'])}]"
        kind = schema.get("type")
        if isinstance(kind, list):
            return _union([self.type_of({**schema, "type": k}, parent, key, deps) for k in kind])
        if kind == "array":
            return f"list[{self.type_of(schema['items'], parent, key + '_item', deps)}]"
        if kind == "object" and "properties" in schema:
            nested = parent + "".join(part.capitalize() for part in key.split("_"))
            self.define(nested, schema)
            deps.add(nested)
            return nested
        if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
            return f"dict[str, {self.type_of(schema['additionalProperties'], parent, key, deps)}]"
        if kind in PRIMITIVES:
            return PRIMITIVES[kind]
        raise SystemExit(f"{parent}.{key}: a schema construct this generator does not know: {json.dumps(schema)}")


def _union(parts: list[str]) -> str:
    """`A | B`, with neighbouring Literal[...] merged into one (Num: float | Literal["NaN", "Infinity", ...])."""
    merged: list[str] = []
    for part in parts:
        if merged and merged[-1].startswith("Literal[") and part.startswith("Literal["):
            merged[-1] = merged[-1][:-1] + ", " + part[len("Literal[") :]
        elif part not in merged:
            merged.append(part)
    return " | ".join(merged)


def _comment(text: str, indent: str = "") -> str:
    if not text:
        return ""
    width = LINE - len(indent) - 2
    lines = [line for para in text.splitlines() for line in (textwrap.wrap(para, width) or [""])]
    return "".join(f"{indent}# {line}".rstrip() + "\n" for line in lines)


def _assign(head: str, value: str, indent: str = "") -> str:
    """`head + value` formatted as ruff formats it: one line, or the value parenthesized, one part a line."""
    if len(indent) + len(head) + len(value) <= LINE:
        return head + value
    if value.startswith("Literal["):
        items = value[len("Literal[") : -1].split(", ")
        return head + "Literal[\n" + "".join(f"    {item},\n" for item in items) + "]"
    parts = value.split(" | ")
    return head + "(\n    " + "\n    | ".join(parts) + "\n)"


def _docstring(text: str, indent: str) -> str:
    width = LINE - len(indent) - 3
    lines = textwrap.wrap(text, width) or [""]
    if lines[-1].endswith('"'):
        lines[-1] += " "
    if len(lines) == 1 and len(indent) + len(lines[0]) + 6 <= LINE:
        return f'{indent}"""{lines[0]}"""\n'
    body = f'{indent}"""' + lines[0] + "\n" + "".join(f"{indent}{line}\n" for line in lines[1:])
    return body.rstrip("\n") + '"""\n' if len(lines[-1]) + len(indent) + 3 <= LINE else body + f'{indent}"""\n'


def _class(name: str, base: str, doc: str, fields: list[tuple[str, str, str]]) -> str:
    out = f"class {name}({base}):\n" + _docstring(doc, "    ")
    if fields:
        out += "\n"
    for key, annotation, description in fields:
        field = _assign(f"{key}: ", annotation, "    ").replace("\n", "\n    ")
        out += _comment(description, "    ") + "    " + field + "\n"
    return out.rstrip("\n")


def generate(schema_path: Path = SCHEMA) -> str:
    with open(schema_path, encoding="utf-8") as f:
        definitions = json.load(f)["definitions"]
    return Generator(definitions).run()


def main(argv: list[str]) -> None:
    text = generate()
    if "--stdout" in argv:
        sys.stdout.write(text)
        return
    TARGET.parent.mkdir(exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])

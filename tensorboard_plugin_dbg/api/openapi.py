"""The OpenAPI 3.1 document of the API, built from the route table so it cannot drift from what is served.

Response schemas come from `wire_schema.json` in this folder, the one schema file, which `npm run schema` generates
from `frontend/src/api/wire.ts` into the package (which must not need the frontend folder at runtime;
`tests/test_contract.py` checks it equals a fresh generation). OpenAPI 3.1 is used because its schema
dialect is JSON Schema, so the generated definitions are used unchanged except for their `$ref` prefix.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from typing import Any

from tensorboard_plugin_dbg.api import errors, params
from tensorboard_plugin_dbg.api.spec import RouteSpec

WIRE_SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wire_schema.json")
SERVER_URL = "/data/plugin/dbg"

# An OpenAPI document or JSON Schema object: open-ended JSON by its standard (its shape is the standard's, not ours)
Json = dict[str, Any]


@functools.lru_cache(maxsize=1)
def wire_schema() -> Json:
    """The JSON Schema (draft-07, `definitions`) of every wire.ts type."""
    with open(WIRE_SCHEMA_PATH, encoding="utf-8") as f:
        return json.load(f)


def _rewrite_refs(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: (
                v.replace("#/definitions/", "#/components/schemas/")
                if k == "$ref" and isinstance(v, str)
                else _rewrite_refs(v)
            )
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_rewrite_refs(v) for v in node]
    return node


def _param_schema(p: params.Param) -> Json:
    if p.kind == "int":
        schema: Json = {
            "type": "integer",
            "minimum": p.minimum if p.minimum is not None else 0,
            "maximum": p.maximum if p.maximum is not None else params.MAX_INT,
        }
    elif p.kind == "float":
        schema = {"type": "number", "minimum": p.minimum if p.minimum is not None else 0}
        if p.maximum is not None:
            schema["maximum"] = p.maximum
    elif p.kind == "mutes":
        schema = {"type": "string", "maxLength": params.MAX_STRING, "contentMediaType": "application/json"}
    elif p.kind == "bool":
        schema = {"type": "boolean"}
    elif p.kind == "enum":
        schema = {"type": "string", "enum": list(p.choices)}
    elif p.kind == "id_list":
        schema = {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}
        if p.maximum is not None:
            schema["maxItems"] = p.maximum
    else:
        schema = {"type": "string", "maxLength": params.MAX_STRING}
        if p.pattern is not None:
            schema["pattern"] = p.pattern
    if p.default is not None:
        schema["default"] = p.default
    return schema


def _parameter(p: params.Param) -> Json:
    out = {
        "name": p.name,
        "in": "query",
        "required": p.required,
        "description": p.description,
        "schema": _param_schema(p),
    }
    if p.kind == "id_list":
        out.update(style="form", explode=False)  # ids=a,b,c
    return out


def _error(description: str) -> Json:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}},
    }


def _operation(spec: RouteSpec) -> Json:
    ok_schema = (
        {"$ref": f"#/components/schemas/{spec.response}"}
        if spec.response
        else {"type": "object", "description": "An OpenAPI 3.1 document."}
    )
    if spec.content_type != "application/json":
        ok_schema = {"type": "string", "format": "binary"}
    responses: Json = {
        "200": {
            "description": spec.response
            or ("OpenAPI document" if spec.content_type == "application/json" else spec.summary),
            "content": {spec.content_type: {"schema": ok_schema}},
        },
    }
    # Every route answers 400 to an unknown or repeated parameter, even the routes that take none.
    responses["400"] = _error(
        f"Bad parameter: {errors.BAD_PARAMETER}, {errors.MISSING_PARAMETER} or {errors.PAGE_TOO_LARGE}"
    )
    if spec.needs_run or spec.not_found:
        responses["404"] = _error(f"not_found: {spec.not_found or 'unknown run, index, graph, op or stack frame'}")
    responses["405"] = _error("method_not_allowed: only GET is answered")
    responses["500"] = _error("internal: a bug in the plugin (never caused by bad input)")
    op: Json = {"operationId": spec.name.replace(".", "_"), "summary": spec.summary, "responses": responses}
    if spec.params:
        op["parameters"] = [_parameter(p) for p in spec.params]
    return op


@functools.lru_cache(maxsize=1)
def document(routes: tuple[RouteSpec, ...]) -> Json:
    """The OpenAPI 3.1 document of the route table `routes` (routes.ROUTES; built once: the table is constant)."""
    schemas = _rewrite_refs(copy.deepcopy(wire_schema()["definitions"]))
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "tensorboard-plugin-dbg",
            "version": "1",
            "description": (
                "JSON API of the TensorBoard debugger plugin `dbg`. Every route is GET. "
                + params.RULES
                + " Errors are ErrorResponse JSON: 400 bad parameter, 404 unknown run/index/graph/op/"
                "frame or route, 405 non-GET. Non-finite floats are the strings NaN, Infinity, "
                "-Infinity. Responses are gzipped when the client accepts gzip."
            ),
        },
        "servers": [{"url": SERVER_URL}],
        "paths": {f"/{spec.name}": {"get": _operation(spec)} for spec in routes},
        "components": {"schemas": schemas},
    }

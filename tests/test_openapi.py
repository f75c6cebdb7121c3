"""The OpenAPI document: valid OpenAPI 3.1, served as built, in step with the route table and wire.ts."""

from __future__ import annotations

import json

from api_helpers import FakeCatalog, load_schema, make_app, ok
from openapi_spec_validator import validate
from werkzeug.test import Client

from tensorboard_plugin_dbg.api import openapi
from tensorboard_plugin_dbg.api.routes import ROUTES


def test_document_is_valid_openapi_31():
    doc = openapi.document(ROUTES)
    validate(doc)  # raises on any structural error or dangling $ref
    assert doc["openapi"].startswith("3.1")


def test_served_document_is_the_built_one():
    served = ok(Client(make_app("/x", FakeCatalog)[0]), "openapi.json")
    assert served == json.loads(json.dumps(openapi.document(ROUTES)))


def test_document_follows_the_route_table():
    doc = openapi.document(ROUTES)
    assert set(doc["paths"]) == {f"/{r.name}" for r in ROUTES}
    for spec in ROUTES:
        op = doc["paths"][f"/{spec.name}"]["get"]
        params = {p["name"]: p for p in op.get("parameters", [])}
        assert list(params) == [p.name for p in spec.params], spec.name
        for p in spec.params:
            assert params[p.name]["required"] == p.required and params[p.name]["in"] == "query"
            if p.kind == "int":
                assert params[p.name]["schema"]["type"] == "integer" and params[p.name]["schema"]["minimum"] >= 0
            if p.kind == "enum":
                assert params[p.name]["schema"]["enum"] == list(p.choices)
        schema = op["responses"]["200"]["content"][spec.content_type]["schema"]
        if spec.content_type != "application/json":  # a binary route (tensor.npy): bytes, errors still JSON
            assert schema == {"type": "string", "format": "binary"}
        if spec.response:
            assert schema == {"$ref": f"#/components/schemas/{spec.response}"}
            assert spec.response in doc["components"]["schemas"]
        for status in (["400"] if spec.params else []) + (["404"] if spec.needs_run else []) + ["405"]:
            assert op["responses"][status]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/ErrorResponse"
            }


def test_every_wire_response_type_has_a_route():
    # Each `...Response`/`...Detail`/`...Info` type wire.ts names as a route answer is served by some route.
    served = {r.response for r in ROUTES}
    roots = {
        name
        for name in load_schema()["definitions"]
        if name.endswith(("Response", "Detail")) or name in ("GraphInfo", "OpInfo")
    } - {"ErrorResponse"}
    assert roots <= served, roots - served

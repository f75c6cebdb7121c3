"""The encoder's fast path (orjson where no non-finite float can be) gives the same JSON values as the stdlib
path, and falls back to it for everything orjson would spell differently or refuse."""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_dbg.api import json_encoding
from tensorboard_plugin_dbg.index.record_reads import FiniteList

_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
)
_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(st.text(max_size=6), inner, max_size=6)),
    max_leaves=60,
)


@settings(max_examples=300, deadline=None)
@given(_values)
@pytest.mark.slow  # ~4 s
def test_encode_is_the_stdlib_json_value(value):
    assert json.loads(json_encoding.encode(value)) == json.loads(json_encoding.dumps(value))


def test_non_finite_floats_outside_vouched_lists_are_wire_strings():
    value = {"rows": FiniteList([{"wall_time": 1.5, "health": {"nan": 0}}]), "x": math.nan, "y": [-math.inf]}
    assert json.loads(json_encoding.encode(value)) == {
        "rows": [{"wall_time": 1.5, "health": {"nan": 0}}],
        "x": "NaN",
        "y": ["-Infinity"],
    }


@pytest.mark.parametrize(
    "value",
    [
        {"a": np.float64(1.0)},
        {"a": np.int64(3)},
        {1: "int key"},
        {"big": 2**64},
        {"s": "\ud800"},
        {"n": [1.0] * 1000},
        {"t": (math.inf,)},
    ],
)
def test_what_orjson_cannot_spell_takes_the_stdlib_path(value):
    assert json.loads(json_encoding.encode(value)) == json.loads(json_encoding.dumps(value))


def test_vouched_lists_skip_the_walk():
    rows = FiniteList([{"i": i, "w": float(i)} for i in range(5000)])  # far past the walk budget
    assert json_encoding._orjson_safe({"rows": rows, "total": 5000})
    assert not json_encoding._orjson_safe({"rows": list(rows)})


def test_without_orjson_the_stdlib_path_answers(monkeypatch):
    monkeypatch.setattr(json_encoding, "orjson", None)
    value = {"rows": FiniteList([1.5, None]), "x": math.inf}
    assert json.loads(json_encoding.encode(value)) == {"rows": [1.5, None], "x": "Infinity"}


def test_gzip_of_big_bodies_is_cached_by_their_bytes():
    body = json.dumps({"lines": [f"line {i}" for i in range(20000)]}).encode()
    assert len(body) >= json_encoding._GZ_CACHE_MIN
    first = json_encoding.gzip_bytes(body)
    assert gzip.decompress(first) == body
    assert json_encoding.gzip_bytes(bytes(body)) is first  # equal bytes, another object: the cached stream
    other = body.replace(b"line 1", b"line X", 1)
    assert gzip.decompress(json_encoding.gzip_bytes(other)) == other
    assert json_encoding._gz_cached_bytes <= json_encoding._GZ_CACHE_BYTES

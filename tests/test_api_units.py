"""Unit tests of the API's building blocks: the JSON encoder, parameter parsing, the static file resolver."""

from __future__ import annotations

import gzip
import json
import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_dbg import static_files
from tensorboard_plugin_dbg.api import errors, json_encoding, params
from tensorboard_plugin_dbg.api.params import Param, parse_params

# ------------------------------------------------------------------------------------------------ encoder


def _decode_num(v):
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, v) if isinstance(v, str) else v


def test_non_finite_floats_become_the_wire_strings():
    text = json_encoding.dumps({"a": math.nan, "b": [math.inf, -math.inf, 1.5], "c": np.float32("nan")})
    assert json.loads(text) == {"a": "NaN", "b": ["Infinity", "-Infinity", 1.5], "c": "NaN"}
    assert "NaN," not in text.replace('"NaN"', "")  # no bare NaN token: strict JSON only


def test_numpy_scalars_arrays_keys_and_bytes():
    value = {
        np.int64(3): np.arange(3, dtype=np.int32),
        "f": np.float16(0.5),
        "b": np.bool_(True),
        "m": np.array([[1.0, np.nan], [np.inf, 2.0]]),
        "t": (1, 2),
        "raw": b"ok\xff",
        "s": np.str_("x"),
    }
    assert json.loads(json_encoding.dumps(value)) == {
        "3": [0, 1, 2],
        "f": 0.5,
        "b": True,
        "m": [[1.0, "NaN"], ["Infinity", 2.0]],
        "t": [1, 2],
        "raw": "ok\ufffd",
        "s": "x",
    }


def test_unencodable_object_is_a_type_error():
    with pytest.raises(TypeError):
        json_encoding.dumps({"x": object()})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64)))
def test_every_float_round_trips(values):
    decoded = [_decode_num(v) for v in json.loads(json_encoding.dumps(values))]
    assert len(decoded) == len(values)
    for got, want in zip(decoded, values):
        assert (math.isnan(got) and math.isnan(want)) or got == want


def test_gzip_only_when_accepted_and_worth_it():
    big = {"rows": list(range(2000))}
    body, gz = json_encoding.encode_body(big, accept_gzip=True)
    assert gz and json.loads(gzip.decompress(body)) == big
    body, gz = json_encoding.encode_body(big, accept_gzip=False)
    assert not gz and json.loads(body) == big
    body, gz = json_encoding.encode_body({"a": 1}, accept_gzip=True)
    assert not gz and json.loads(body) == {"a": 1}


# ------------------------------------------------------------------------------------------------ params

INT = Param("index", "int", "", required=True)
PAGE = (Param("begin", "int", "", required=True), Param("end", "int", "", required=True))


def _code(fn) -> str:
    with pytest.raises(errors.ApiError) as info:
        fn()
    assert info.value.status == 400
    return info.value.code


@pytest.mark.parametrize(
    "raw",
    ["-1", "abc", "1.0", "+1", " 1", "1 ", "1_0", "0x1", "\u0661", "1e3", "99999999999999999999", "9007199254740992"],
)
def test_bad_integers_are_400(raw):
    assert _code(lambda: INT.parse(raw)) == errors.BAD_PARAMETER


def test_good_integers():
    assert INT.parse("0") == 0 and INT.parse("00012") == 12 and INT.parse("9007199254740991") == 2**53 - 1


def test_missing_empty_unknown_and_repeated():
    assert _code(lambda: parse_params((INT,), {})) == errors.MISSING_PARAMETER
    assert _code(lambda: parse_params((INT,), {"index": [""]})) == errors.MISSING_PARAMETER
    assert _code(lambda: parse_params((INT,), {"index": ["1"], "indx": ["1"]})) == errors.BAD_PARAMETER
    assert _code(lambda: parse_params((INT,), {"index": ["1", "2"]})) == errors.BAD_PARAMETER
    opt = Param("near", "int", "")
    assert parse_params((opt,), {"near": [""]}) == {"near": None}  # empty == absent


def test_page_rules():
    assert parse_params(PAGE, {"begin": ["5"], "end": ["1005"]}, paged=True) == {"begin": 5, "end": 1005}
    assert _code(lambda: parse_params(PAGE, {"begin": ["6"], "end": ["5"]}, paged=True)) == errors.BAD_PARAMETER
    with pytest.raises(errors.ApiError) as info:
        parse_params(PAGE, {"begin": ["0"], "end": ["1001"]}, paged=True)
    assert info.value.code == errors.PAGE_TOO_LARGE and "1000" in info.value.message


def test_bool_enum_and_id_list():
    flag = Param("only_nonfinite", "bool", "", default=False)
    assert [flag.parse(v) for v in ("true", "True", "1", "false", "0")] == [True, True, True, False, False]
    assert _code(lambda: flag.parse("yes")) == errors.BAD_PARAMETER
    enum = Param("type", "enum", "", choices=("InfNanAlert",))
    assert enum.parse("InfNanAlert") == "InfNanAlert"
    assert _code(lambda: enum.parse("infnanalert")) == errors.BAD_PARAMETER
    ids = Param("ids", "id_list", "", maximum=3)
    assert ids.parse("a,b") == ["a", "b"]
    assert _code(lambda: ids.parse("a,,b")) == errors.BAD_PARAMETER
    assert _code(lambda: ids.parse("a,b,c,d")) == errors.PAGE_TOO_LARGE


def test_clamp_page():
    page = {"begin": 90, "end": 120, "total": 100}
    params.clamp_page(page, 100)
    assert (page["begin"], page["end"]) == (90, 100)
    page = {"begin": 500, "end": 600}
    params.clamp_page(page, 100)
    assert (page["begin"], page["end"]) == (100, 100)


# ------------------------------------------------------------------------------------------------ static files


def test_static_resolve_stays_inside(tmp_path, monkeypatch):
    inside = tmp_path / "static"
    inside.mkdir()
    (inside / "index.js").write_text("x")
    (inside / "sub").mkdir()
    (inside / "sub" / "a.js").write_text("y")
    (tmp_path / "secret.txt").write_text("s")
    os.symlink(tmp_path / "secret.txt", inside / "link.js")
    monkeypatch.setattr(static_files, "STATIC_DIR", str(inside))
    assert static_files.resolve("index.js") == str((inside / "index.js").resolve())
    assert static_files.resolve("sub/a.js") == str((inside / "sub" / "a.js").resolve())
    assert static_files.resolve("sub/../index.js") is not None  # stays inside: fine
    for bad in (
        "../secret.txt",
        "sub/../../secret.txt",
        str(tmp_path / "secret.txt"),
        "/etc/passwd",
        "\\etc\\passwd",
        "link.js",
        "index.js\x00",
        "",
        "sub",
        "C:/x",
        "missing.js",
    ):
        assert static_files.resolve(bad) is None, bad

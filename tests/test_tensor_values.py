"""The tensor routes on a FULL_TENSOR dump written by real TensorFlow (tests/programs/tensor_values.py): every dtype
decodes, `tensor.npy` is bit-exact, every slice form equals numpy's own slicing, stats / histogram / non-finite
positions equal numpy's, hostile parameters are 4xx JSON, and non-FULL_TENSOR modes say what they carry."""

from __future__ import annotations

import io
import math
import os
import random
import sys

import dumps
import numpy as np
import pytest
from api_helpers import get, make_app, ok, url, wait_indexed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import Client

from tensorboard_plugin_dbg.analysis import tensor_slices

sys.path.insert(0, dumps.PROGRAMS)
import tensor_values as program  # noqa: E402 - the program's own expected arrays

EXPECTED = program.expected()
STRING = "str_1d"


@pytest.fixture(scope="module")
def served():
    client = Client(make_app(dumps.make_dump("tensor_values"))[0])
    run = wait_indexed(client)["runs"][0]["name"]
    rows = ok(client, "graph_executions", run=run, begin=0, end=1000)["rows"]
    graph = {r["op_name"]: r["index"] for r in rows}
    execs = ok(client, "executions", run=run, begin=0, end=1000)["executions"]
    eager = [e["index"] for e in execs if e["op_type"] == "IdentityN"]
    assert len(eager) == len(program.NAMES)
    where = {}
    for k, name in enumerate(program.NAMES):
        where[("graph", name)] = graph[f"v_{name}"]
        where[("eager", name)] = eager[k]
    return client, run, where, graph, execs


def _number(v):
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, v) if isinstance(v, str) else v


def _as_served(arr: np.ndarray, name: str) -> list:
    """What the route must serve for these elements (C order)."""
    if name.startswith("bf16"):
        arr = (arr.astype(np.uint32) << 16).view(np.float32)
    flat = arr.reshape(-1)
    if flat.dtype == object:
        return [x.decode() for x in flat]
    if flat.dtype.kind == "c":
        return [str(complex(x)) for x in flat.tolist()]
    return flat.tolist()


def _same(served: list, expected: list) -> bool:
    if len(served) != len(expected):
        return False
    for s, e in zip(served, expected):
        s = _number(s)
        if isinstance(e, float) and math.isnan(e):
            if not (isinstance(s, float) and math.isnan(s)):
                return False
        elif s != e or type(s) is not type(e):
            return False
    return True


SOURCES = [(source, name) for source in ("graph", "eager") for name in program.NAMES]


@pytest.mark.parametrize("source,name", SOURCES, ids=[f"{s}-{n}" for s, n in SOURCES])
def test_npy_is_bit_exact(served, source, name):
    client, run, where, _, _ = served
    resp = client.get(url("tensor.npy", run=run, source=source, index=where[(source, name)]))
    assert resp.status_code == 200 and resp.headers["Content-Type"] == "application/octet-stream"
    data = resp.get_data()
    assert int(resp.headers["Content-Length"]) == len(data)
    got = np.load(io.BytesIO(data))
    want = EXPECTED[name]
    if name == STRING:
        assert got.dtype.kind == "S" and [bytes(x) for x in got] == list(want)
        return
    assert got.shape == want.shape and got.dtype == want.dtype.newbyteorder("<")
    assert got.tobytes() == want.astype(want.dtype.newbyteorder("<")).tobytes()
    assert resp.headers["X-Dbg-Dtype"] == ("bfloat16" if name.startswith("bf16") else got.dtype.name)
    assert ("bfloat16" in resp.headers["Content-Disposition"]) == name.startswith("bf16")


@pytest.mark.parametrize("source,name", SOURCES, ids=[f"{s}-{n}" for s, n in SOURCES])
def test_whole_tensor_values_dtype_and_shape(served, source, name):
    client, run, where, _, _ = served
    body = ok(client, "tensor", run=run, source=source, index=where[(source, name)], slice="...")
    want = EXPECTED[name]
    dtype = {"bf16": "bfloat16", "str": "string"}.get(name.split("_")[0], str(want.dtype))
    assert (body["dtype"], body["shape"], body["size"], body["has_values"]) == (
        dtype,
        list(want.shape),
        want.size,
        True,
    )
    assert body["slice"]["shape"] == list(want.shape)
    assert _same(body["slice"]["values"], _as_served(want, name)), body["slice"]["values"][:8]
    assert body["tensor"]["tensor_debug_mode"] == "FULL_TENSOR" and body["tensor"]["source"] == source


FORMS = ["0", "-1", "1:", ":-1", "::2", "::-1", "-1::-2", "...", "0,...", "...,-1", "1:2,...,0", "0,1:3,::2,-1"]
FORMS += ["-2:,0", ":,:,1", "...,::-1", "1,-1,2:0:-1", "5:100", "-100:1", "0:0", " 1 , : "]


@pytest.mark.parametrize("name", ["f32_4d", "f64_2d", "f16_3d", "bf16_2d", "i32_3d", "u64_1d", "bool_2d", "c128_2d"])
def test_every_slice_form_equals_numpy(served, name):
    client, run, where, _, _ = served
    want = EXPECTED[name]
    for spec in FORMS:
        try:
            expected = want[eval(f"np.s_[{spec}]")]  # noqa: S307 - the test's own literal slices
        except IndexError:
            status, _, body = get(
                client, url("tensor", run=run, source="graph", index=where[("graph", name)], slice=spec)
            )
            assert status == 400 and body["error"]["code"] == "bad_parameter", (spec, body)
            continue
        body = ok(client, "tensor", run=run, source="graph", index=where[("graph", name)], slice=spec)
        assert body["slice"]["shape"] == list(expected.shape), spec
        assert _same(body["slice"]["values"], _as_served(np.asarray(expected), name)), spec


def _random_spec(rng: random.Random, rank: int) -> str:
    def bound():
        return "" if rng.random() < 0.3 else str(rng.randint(-7, 7))

    items = []
    for _ in range(rng.randint(0, rank + 1)):
        r = rng.random()
        if r < 0.3:
            items.append(str(rng.randint(-6, 6)))
        elif r < 0.4:
            items.append("...")
        else:
            step = "" if rng.random() < 0.4 else ":" + str(rng.choice([-3, -2, -1, 1, 2, 3]))
            items.append(f"{bound()}:{bound()}{step}")
    return ",".join(items)


def test_random_slices_agree_with_numpy(served):
    """Seeded random slices of the grammar: numpy's answer or numpy's IndexError, value for value."""
    client, run, where, _, _ = served
    rng = random.Random(16)
    checked = refused = 0
    for _ in range(300):
        name = rng.choice(["f32_4d", "i16_2d", "f16_3d", "u8_2d"])
        want = EXPECTED[name]
        spec = _random_spec(rng, want.ndim)
        status, _, body = get(
            client, url("tensor", run=run, source="graph", index=where[("graph", name)], slice=spec or "...")
        )
        try:
            expected = want[eval(f"np.s_[{spec or '...'}]")]  # noqa: S307
        except IndexError:
            assert status == 400 and body["error"]["code"] == "bad_parameter", (name, spec, body)
            refused += 1
            continue
        assert status == 200, (name, spec, body)
        assert body["slice"]["shape"] == list(expected.shape), (name, spec)
        assert _same(body["slice"]["values"], _as_served(np.asarray(expected), name)), (name, spec)
        checked += 1
    assert checked > 150 and refused > 10, (checked, refused)


@pytest.mark.parametrize("name", ["f32_4d", "f64_2d", "f16_3d", "bf16_2d", "i64_1d", "u8_2d", "bool_2d", "c128_2d"])
def test_stats_histogram_and_positions_equal_numpy(served, name):
    client, run, where, _, _ = served
    body = ok(client, "tensor", run=run, source="eager", index=where[("eager", name)], bins=16)
    a = EXPECTED[name]
    if name.startswith("bf16"):
        a = (a.astype(np.uint32) << 16).view(np.float32)
    x = np.abs(a) if a.dtype.kind == "c" else a.astype(np.float64)
    finite = x[np.isfinite(x)]
    s = body["stats"]
    assert s["count"] == a.size and s["of"] == ("modulus" if a.dtype.kind == "c" else "values")
    assert (s["nan"], s["pos_inf"], s["neg_inf"]) == (
        int(np.isnan(x).sum()),
        int(np.isposinf(x).sum()),
        int(np.isneginf(x).sum()),
    )
    assert (s["neg"], s["zero"], s["pos"]) == (
        int((finite < 0).sum()),
        int((finite == 0).sum()),
        int((finite > 0).sum()),
    )
    assert (s["min"], s["max"]) == (finite.min(), finite.max())
    assert s["mean"] == pytest.approx(finite.mean(), rel=1e-9)
    # the squared deviations are formed in the tensor's own float dtype, then summed in float64
    assert s["std"] == pytest.approx(finite.std(), rel=1e-6) and s["std"] != pytest.approx(finite.std() * 1.0001)
    counts, edges = np.histogram(finite, bins=16, range=(finite.min(), finite.max()))
    h = body["histogram"]
    assert h["counts"] == counts.tolist() and np.allclose(h["edges"], edges)
    bad = ~np.isfinite(x)
    positions = np.argwhere(bad).tolist()
    nf = body["nonfinite"]
    assert nf["positions"] == positions and nf["total"] == len(positions) and not nf["truncated"]
    for axis, entry in enumerate(nf["per_axis"]):
        per = bad.sum(axis=tuple(k for k in range(a.ndim) if k != axis))
        assert entry["index"] == np.flatnonzero(per).tolist() and entry["count"] == per[per > 0].tolist()


def test_known_nonfinite_places(served):
    client, run, where, graph, _ = served
    body = ok(client, "tensor", run=run, source="graph", index=graph["culprit"], slice="1:3,2:4")
    assert body["nonfinite"]["positions"] == [[1, 2], [2, 3]]
    with np.errstate(all="ignore"):
        want = np.log(program.LOG_INPUT[1:3, 2:4]).reshape(-1).tolist()
    assert body["slice"]["values"][0] == "-Infinity" and body["slice"]["values"][3] == "NaN"
    assert body["slice"]["values"][1:3] == want[1:3]
    f32 = ok(client, "tensor", run=run, source="graph", index=where[("graph", "f32_4d")])
    assert f32["nonfinite"]["positions"] == [[0, 1, 2, 3], [1, 0, 0, 0], [1, 2, 3, 4]]
    assert f32["slice"] is None  # no slice asked: the summary only


def test_inputs_side_by_side(served):
    client, run, _, graph, execs = served
    body = ok(client, "tensor_inputs", run=run, source="graph", index=graph["culprit"])
    (inp,) = body["inputs"]
    assert inp["name"] == "shifted:0" and inp["tensor"]["index"] == graph["shifted"]
    values = ok(client, "tensor", run=run, source="graph", index=inp["tensor"]["index"], slice="...")
    assert values["slice"]["values"] == program.LOG_INPUT.reshape(-1).tolist()
    sqrt = next(e["index"] for e in execs if e["op_type"] == "Sqrt")
    (eager_in,) = ok(client, "tensor_inputs", run=run, source="eager", index=sqrt)["inputs"]
    assert eager_in["tensor"]["source"] == "eager" and eager_in["tensor"]["op_type"] == "Sub"
    sub = ok(client, "tensor", run=run, source="eager", index=eager_in["tensor"]["index"], slice="...")
    assert sub["slice"]["values"] == [-1.0, 4.0]


def test_cap_is_a_400_naming_it():
    items = tensor_slices.parse("", (300, 300))
    with pytest.raises(tensor_slices.SliceError, match="65,536") as info:
        tensor_slices.selection(items, (300, 300))
    assert info.value.too_large
    flat, shape = tensor_slices.selection(tensor_slices.parse("0:256,0:256", (300, 300)), (300, 300))
    assert shape == (256, 256) and len(flat) == tensor_slices.MAX_SLICE_ELEMENTS


def test_health_modes_say_what_they_carry():
    client = Client(make_app(dumps.make_dump("nan_div", "SHAPE"))[0])
    run = wait_indexed(client)["runs"][0]["name"]
    row = ok(client, "graph_executions", run=run, begin=0, end=1)["rows"][0]
    body = ok(client, "tensor", run=run, source="graph", index=row["index"], slice="...")
    assert body["has_values"] is False and body["slice"] is None and body["stats"] is None
    assert body["health"]["mode"] == "SHAPE" and body["shape"] == row["health"]["shape"]
    assert 'tensor_debug_mode="FULL_TENSOR"' in body["note"] and "op_regex" in body["note"]
    status, _, err = get(client, url("tensor.npy", run=run, source="graph", index=row["index"]))
    assert status == 404 and "FULL_TENSOR" in err["error"]["message"]


_TEXT = st.text(alphabet=st.sampled_from(list("0123456789-:.,. ab\u0660\x00[]()+eE_")), max_size=30)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    spec=_TEXT,
    index=st.one_of(st.integers(-5, 10**20).map(str), _TEXT),
    output=st.one_of(st.none(), st.integers(-3, 40).map(str), _TEXT),
    bins=st.one_of(st.none(), st.integers(-3, 5000).map(str), _TEXT),
    source=st.sampled_from(["graph", "eager", "", "Graph", "x"]),
    route=st.sampled_from(["tensor", "tensor.npy", "tensor_inputs"]),
)
def test_hostile_parameters_are_4xx_json(served, spec, index, output, bins, source, route):
    client, run, _, _, _ = served
    params = {"run": run, "source": source, "index": index}
    if route == "tensor":
        params.update(slice=spec, bins=bins)
    if route != "tensor_inputs":
        params["output"] = output
    resp = client.get(url(route, **params))
    if resp.status_code == 200:
        return
    assert 400 <= resp.status_code < 500, (params, resp.get_data()[:300])
    status, _, body = get(client, url(route, **params))
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body


def test_program_module_loaded_from_the_programs_dir():
    assert os.path.dirname(program.__file__) == dumps.PROGRAMS


def _big_trace_record(values: np.ndarray, dtype_enum: int) -> bytes:
    from tensorboard.compat.proto import tensor_pb2

    from tensorboard_plugin_dbg.reader import schema

    tp = tensor_pb2.TensorProto(dtype=dtype_enum, tensor_content=values.tobytes())
    for d in values.shape:
        tp.tensor_shape.dim.add().size = d
    ev = schema.DebugEvent(wall_time=12.5)
    t = ev.graph_execution_trace
    t.tfdbg_context_id, t.op_name, t.output_slot, t.tensor_debug_mode, t.device_name = "g", "big/op", 1, 7, "cpu"
    t.tensor_proto = tp.SerializeToString()
    return ev.SerializeToString()


@pytest.mark.parametrize("dtype,enum", [(np.float32, 1), (np.float16, 19), (np.float64, 2), (np.int32, 3)])
def test_big_records_are_walked_not_parsed_with_the_same_answer(dtype, enum):
    """The indexer walks a FULL_TENSOR record of >= 1 MiB (reader/traces.decode_big) instead of parsing it: same
    wall time, kind and non-finite counts as protobuf's answer, counted in blocks over the record's bytes."""
    from tensorboard_plugin_dbg.reader import debug_values, traces

    x = np.random.default_rng(3).standard_normal((5, 700, 300)).astype(dtype)  # > 2 M elements: several blocks
    if x.dtype.kind == "f":
        x[4, 699, 299], x[0, 0, 0], x[2, 100, 7], x[3, 5, 5] = np.nan, np.inf, -np.inf, np.nan
    data = _big_trace_record(x, enum)
    assert len(data) >= traces._BIG
    walked = traces.decode_big(memoryview(data))
    assert walked is not None
    event = traces.schema.parse_event(data)
    t = event.graph_execution_trace
    parsed_kind = (t.tfdbg_context_id, t.op_name, int(t.output_slot), int(t.tensor_debug_mode), t.device_name)
    assert walked[:2] == (event.wall_time, parsed_kind)
    want = None if x.dtype.kind != "f" else (1.0, 1.0, 2.0, float(x.size))
    assert walked[2] == want == debug_values.nonfinite_counts(7, t.tensor_proto)


@pytest.mark.parametrize("dtype,enum", [(np.float32, 1), (np.int16, 5)])
def test_big_values_are_summarized_in_blocks_with_the_same_answer(dtype, enum):
    """A FULL_TENSOR value over one block (an eager output's health, a trace row of a big dump) is summarized block
    by block: the counts, min and max of the whole-array summary, the mean to float64 rounding."""
    from tensorboard.compat.proto import tensor_pb2

    from tensorboard_plugin_dbg.reader import debug_values

    x = (np.random.default_rng(9).standard_normal(3 * debug_values.COUNT_BLOCK + 5) * 100).astype(dtype)
    if x.dtype.kind == "f":
        x[[0, 10, -1]] = [np.nan, np.inf, -np.inf]
    x[5] = 0
    proto = tensor_pb2.TensorProto(dtype=enum, tensor_content=x.tobytes())
    proto.tensor_shape.dim.add().size = x.size
    got = debug_values.summarize_full_tensor(proto)
    want = debug_values.summarize_array(x, got["dtype"], [x.size])
    assert {k: v for k, v in got.items() if k != "mean"} == {k: v for k, v in want.items() if k != "mean"}
    assert got["mean"] == pytest.approx(want["mean"], rel=1e-9)

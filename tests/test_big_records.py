"""Big FULL_TENSOR trace records streamed through a small buffer (reader/big_record.py) instead of read whole: on a
dump written by real TensorFlow (tests/programs/big_tensor.py, ~1 MiB tensors; the tests lower the threshold so they
take the streamed path), the index (kinds, wall times, locations, non-finite rows, damage) and the tensor routes
answer exactly as with the whole-record path, with a corrupted byte in a big record's middle and with a big record
cut short at the end of a file still being written."""

from __future__ import annotations

import io
import os
import shutil
import sys

import dumps
import numpy as np
import pytest
from api_helpers import make_app, ok, url, wait_indexed
from werkzeug.test import Client

from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.index.columns import LOC_SHIFT
from tensorboard_plugin_dbg.reader import big_record, crc32c

sys.path.insert(0, dumps.PROGRAMS)
import big_tensor as program  # noqa: E402 - the program's own expected arrays

EXPECTED = program.expected()
SMALL_THRESHOLD = 256 << 10  # every value of the program is ~1 MiB: streamed; the "small" op's records are not
WHOLE = 1 << 40  # a threshold no record reaches: the whole-record path
BIG_TRACES = len(program.NAMES) * program.STEPS


@pytest.fixture(scope="module")
def dump() -> str:
    return dumps.make_dump("big_tensor")


@pytest.fixture
def statuses(monkeypatch) -> list[str]:
    """The status of every streamed record (a spy on big_record.read_trace)."""
    seen: list[str] = []
    real = big_record.read_trace

    def spy(path, offset):
        result = real(path, offset)
        seen.append(result.status)
        return result

    monkeypatch.setattr(big_record, "read_trace", spy)
    return seen


def _index(monkeypatch, logdir: str, threshold: int, piece: int = 1 << 16):
    monkeypatch.setattr(big_record, "THRESHOLD", threshold)
    monkeypatch.setattr(big_record, "PIECE", piece)
    run = Catalog(logdir).runs()[0]
    while run.refresh():  # until a pass reads nothing new (a cut file is never "done")
        pass
    return run


def _summary(run) -> dict:
    """The trace index as the queries see it: rows (kind, wall time, location), non-finite rows, damage."""
    return {
        "rows": [
            (run.kinds.kinds[k], w, loc)
            for k, w, loc in zip(
                run.traces.view("kind").tolist(), run.traces.view("wall_time").tolist(), run.traces.view("loc").tolist()
            )
        ],
        "nonfinite": run.trace_nf.view("row").tolist(),
        "damages": sorted(run.damages.items()),
    }


def _trace_file(logdir: str) -> str:
    return next(os.path.join(logdir, n) for n in os.listdir(logdir) if n.endswith("graph_execution_traces"))


def _payload(loc: int) -> int:
    """A row's record payload offset in its file (its location without the file code)."""
    return loc & ((1 << LOC_SHIFT) - 1)


def _length_at(path: str, payload: int) -> int:
    with open(path, "rb") as f:
        f.seek(payload - 12)
        return int.from_bytes(f.read(8), "little")


@pytest.mark.parametrize("piece", [1 << 16, 65540], ids=["64KiB", "64KiB+4"])  # +4: an f64 element would straddle
@pytest.mark.parametrize("crc", ["native", "numpy"])
def test_streamed_index_equals_the_whole_record_path(monkeypatch, statuses, dump, piece, crc):
    if crc == "numpy":
        monkeypatch.setattr(crc32c, "NATIVE", None)
    whole = _summary(_index(monkeypatch, dump, WHOLE))
    assert statuses == []
    streamed = _summary(_index(monkeypatch, dump, SMALL_THRESHOLD, piece))
    assert statuses == [big_record.OK] * BIG_TRACES  # every big trace streamed, none left to the whole path
    assert streamed == whole
    # and the rows are right, not just equal: the non-finite ones are exactly the values holding NaN or ±inf
    flagged = {whole["rows"][r][0][1] for r in whole["nonfinite"]}
    assert flagged == {"v_late_nan", "v_edge_inf", "v_f64_nan", "v_bf16_neginf"}
    big = [row for row in whole["rows"] if row[0][1].startswith("v_")]
    assert len(big) == BIG_TRACES and len(whole["rows"]) > BIG_TRACES and not whole["damages"]  # small ones too


def test_streamed_values_answer_the_tensor_routes(monkeypatch, statuses, dump):
    monkeypatch.setattr(big_record, "THRESHOLD", SMALL_THRESHOLD)
    monkeypatch.setattr(big_record, "PIECE", 1 << 16)
    client = Client(make_app(dump)[0])
    run = wait_indexed(client)["runs"][0]["name"]
    assert statuses.count(big_record.OK) == BIG_TRACES
    rows = ok(client, "graph_executions", run=run, begin=0, end=1000)["rows"]
    for name in program.NAMES:
        want = EXPECTED[name]
        for row in [r for r in rows if r["op_name"] == f"v_{name}"]:
            resp = client.get(url("tensor.npy", run=run, source="graph", index=row["index"]))
            got = np.load(io.BytesIO(resp.get_data()))
            assert got.shape == want.shape and got.tobytes() == want.astype(want.dtype.newbyteorder("<")).tobytes()
            body = ok(client, "tensor", run=run, source="graph", index=row["index"])
            x = (want.astype(np.uint32) << 16).view(np.float32) if name.startswith("bf16") else want
            assert body["nonfinite"]["positions"] == np.argwhere(~np.isfinite(x)).tolist()
    assert sum(r["op_name"].startswith("v_") for r in rows) == BIG_TRACES


def test_a_corrupted_big_record_is_damage_and_the_records_after_it_are_kept(monkeypatch, statuses, dump, tmp_path):
    logdir = str(tmp_path / "dump")
    shutil.copytree(dump, logdir)
    path = _trace_file(logdir)
    rows = _summary(_index(monkeypatch, logdir, WHOLE))["rows"]
    loc = [loc for kind, _, loc in rows if kind[1] == "v_clean"][0]
    payload = _payload(loc)  # the first step's all-finite value
    middle = payload + _length_at(path, payload) // 2
    with open(path, "r+b") as f:
        f.seek(middle)
        byte = f.read(1)
        f.seek(middle)
        f.write(bytes([byte[0] ^ 0x40]))
    whole = _summary(_index(monkeypatch, logdir, WHOLE))
    streamed = _summary(_index(monkeypatch, logdir, SMALL_THRESHOLD))
    assert big_record.DAMAGED in statuses and big_record.FALLBACK not in statuses
    assert streamed == whole
    assert [reason for _, reason in streamed["damages"]] == ["data CRC mismatch"]
    assert streamed["damages"][0][0][1] == payload - 12
    assert len(streamed["rows"]) == len(rows) - 1 and [r for r in rows if r[2] != loc] == streamed["rows"]


@pytest.mark.parametrize("where", ["content", "footer"])
def test_a_big_record_cut_short_is_read_once_complete(monkeypatch, statuses, dump, tmp_path, where):
    logdir = str(tmp_path / "dump")
    shutil.copytree(dump, logdir)
    path = _trace_file(logdir)
    complete = _summary(_index(monkeypatch, logdir, SMALL_THRESHOLD))
    big = [_payload(loc) for kind, _, loc in complete["rows"] if kind[1].startswith("v_")]
    payload = big[len(big) // 2]  # a big record past a few others
    cut = payload + (_length_at(path, payload) // 3 if where == "content" else _length_at(path, payload) + 2)
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "r+b") as f:
        f.truncate(cut)
    # the stat-time check keeps the index from streaming a record the file does not hold yet; read_trace itself
    # also answers PARTIAL when the bytes end early (the file cut between the stat and the read)
    assert big_record.read_trace(path, payload - 12).status == big_record.PARTIAL
    statuses.clear()
    run = _index(monkeypatch, logdir, SMALL_THRESHOLD)
    cut_summary = _summary(run)
    assert cut_summary["rows"] == [r for r in complete["rows"] if _payload(r[2]) < payload]
    assert not cut_summary["damages"] and not run.done
    with open(path, "ab") as f:
        f.write(data[cut:])
    while run.refresh():
        pass
    assert run.done and _summary(run) == complete
    assert big_record.FALLBACK not in statuses


@pytest.mark.parametrize("crc", ["native", "numpy"])
def test_crc_extended_piece_by_piece_equals_the_whole(monkeypatch, crc):
    if crc == "numpy":
        monkeypatch.setattr(crc32c, "NATIVE", None)
    data = np.random.default_rng(3).integers(0, 256, 200_003, dtype=np.uint8)
    value = 0
    for a, b in [(0, 0), (0, 3), (3, 4099), (4099, 4100), (4100, 150_000), (150_000, 200_003)]:
        value = crc32c.extend(value, data[a:b])
    assert value == crc32c.crc32c_python(data.tobytes())

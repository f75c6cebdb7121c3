"""The package's tfdbg2 writer (tensorboard_plugin_dbg/writer, no TensorFlow) against TensorFlow itself.

- Layout: for every graph trace and execution of real TensorFlow dumps in each mode (tests/programs/modes.py), the
  writer's debug tensor, computed from the same tensor read back from the FULL_TENSOR dump, is byte for byte the
  TensorProto TensorFlow wrote; and its FULL_TENSOR protos are byte for byte TensorFlow's.
- Round trip: a file set written by the writer (tests/writer_sets.py) read back by TensorFlow's DebugDataReader gives
  every record and field as written (tests/test_index_oracle.py then checks the plugin's reader against the same
  oracle on this set).
- A file set cut off mid-record (a killed program) still reads.
"""

from __future__ import annotations

import os

import dumps
import numpy as np
import pytest
import writer_sets
from jax_helpers import array as _array
from jax_helpers import events as _events
from run_helpers import oracle

from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.reader import tfrecord
from tensorboard_plugin_dbg.writer import summaries
from tensorboard_plugin_dbg.writer.events import DebugEventsWriter, DumpWriteError

pytestmark = pytest.mark.slow


def _by_op(dump_dir: str) -> dict:
    """(graph name, op name, slot) -> TensorProto bytes of each graph trace; and the executions' proto lists."""
    names = {e.debugged_graph.graph_id: e.debugged_graph.graph_name for e in _events(dump_dir, "graphs")}
    traces = {}
    for e in _events(dump_dir, "graph_execution_traces"):
        t = e.graph_execution_trace
        traces[(names[t.tfdbg_context_id], t.op_name, t.output_slot)] = t.tensor_proto
    execs = [list(e.execution.tensor_protos) for e in _events(dump_dir, "execution")]
    return {"traces": traces, "executions": execs}


def _expected(mode: str, tensor_id: float, x: np.ndarray) -> bytes:
    if not summaries.is_instrumented(mode, x.dtype.name):
        return b""
    counts = summaries.counts_of(x) if mode in summaries.HEALTH_MODES else None
    return summaries.tensor_proto(summaries.debug_vector(mode, int(tensor_id), x.dtype.name, x.shape, counts))


@pytest.fixture(scope="module")
def full_tensor():
    return _by_op(dumps.make_dump("modes", "FULL_TENSOR"))


def test_full_tensor_protos_are_tensorflows(full_tensor):
    traces = list(full_tensor["traces"].values())
    executions = [p for e in full_tensor["executions"] for p in e]
    assert len(traces) > 8 and len(executions) > 3
    for proto in traces:
        assert summaries.tensor_proto(_array(proto)) == proto
    for proto in executions:  # eager records: a scalar in its typed field
        assert summaries.tensor_proto(_array(proto), typed_scalar=True) == proto


@pytest.mark.parametrize("mode", writer_sets.SUMMARY_MODES)
def test_summaries_are_laid_out_as_tensorflow_lays_them_out(full_tensor, mode):
    tf_dump = _by_op(dumps.make_dump("modes", mode))
    # the instrumentation's own constants take different names per mode: every other op is in both dumps, or
    # missing from the summary dump exactly where the mode does not cover its dtype
    common = tf_dump["traces"].keys() & full_tensor["traces"].keys()
    assert {k for k in tf_dump["traces"] if not k[1].startswith("Const")} <= common
    dtypes = set()
    for key in sorted(k for k in full_tensor["traces"] if not k[1].startswith("Const")):
        x = _array(full_tensor["traces"][key])
        dtypes.add(x.dtype.name)
        assert (key in tf_dump["traces"]) == summaries.is_instrumented(mode, x.dtype.name), key
    for key in sorted(common):
        proto = tf_dump["traces"][key]
        x = _array(full_tensor["traces"][key])
        tensor_id = _array(proto)[0] if mode != "NO_TENSOR" else 0
        assert _expected(mode, tensor_id, x) == proto, key
    assert {"float16", "bfloat16", "float32", "float64", "int32", "bool"} <= dtypes
    for ours, theirs in zip(full_tensor["executions"], tf_dump["executions"], strict=True):
        if mode == "NO_TENSOR":
            assert theirs == []
            continue
        assert [_expected(mode, -1, _array(p)) for p in ours] == theirs


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    dump_dir = str(tmp_path_factory.mktemp("writer") / "dump")
    return dump_dir, writer_sets.write(dump_dir)


def test_tensorflows_reader_reads_every_record_as_written(written):
    dump_dir, expected = written
    got = oracle(dump_dir)
    for key in ("run_id", "tf_version", "graphs", "ops", "source_files", "stack_frames", "devices"):
        assert got[key] == expected[key], key
    assert [{k: v for k, v in e.items() if k != "wall_time"} for e in got["executions"]] == expected["executions"]
    assert [{k: v for k, v in t.items() if k != "wall_time"} for t in got["traces"]] == expected["traces"]
    # TF's InfNanMonitor sees the -inf/+inf/NaN of the health-mode records
    assert {a[1] for a in got["alerts"]} >= {"Type0", "Type1", "Type2", "inner_fn"}


def test_a_file_set_cut_mid_record_still_reads(written, tmp_path):
    dump_dir, expected = written
    cut = tmp_path / "logdir" / "cut"
    cut.mkdir(parents=True)
    for name in os.listdir(dump_dir):
        data = open(os.path.join(dump_dir, name), "rb").read()
        if name.endswith(".graph_execution_traces"):
            data = data[: len(data) - 7]  # the last record loses its tail, as when a program is killed
        (cut / name).write_bytes(data)
    (run,) = Catalog(str(cut.parent)).runs()
    info = run.info()
    assert not [n for n in info["status"]["notices"] if n["severity"] == "error"]
    assert info["counts"]["graph_executions"] == len(expected["traces"]) - 1
    assert info["counts"]["executions"] == len(expected["executions"])


def test_an_unwritable_dump_root_fails_at_the_call(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(DumpWriteError, match="cannot write a debug dump"):
        DebugEventsWriter(str(blocker / "dump"), "x")


def test_the_circular_buffer_keeps_the_last_n_until_close(tmp_path):
    w = DebugEventsWriter(str(tmp_path / "d"), "x", circular_buffer_size=3)
    for i in range(5):
        w.execution(f"op{i}", 4)
    w.flush()
    assert _events(str(tmp_path / "d"), "execution") == []
    w.close()
    assert [e.execution.op_type for e in _events(str(tmp_path / "d"), "execution")] == ["op2", "op3", "op4"]


@pytest.mark.parametrize("native", [True, False])
def test_framing_matches_the_readers_with_and_without_native_crc(monkeypatch, native):
    from tensorboard_plugin_dbg.reader import crc32c
    from tensorboard_plugin_dbg.writer import events

    if not native:
        monkeypatch.setattr(crc32c, "NATIVE", None)
    for payload in (b"", b"x" * 7, bytes(range(256)) * 3):
        assert events.frame(payload) == tfrecord.frame(payload)

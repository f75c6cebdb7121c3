"""writer/execution_layout.py: an execution joined from its layout is the bytes `DebugEventsWriter.execution` writes
through protobuf (fields in number order, defaults left out), whatever its ids (negative: an input not recorded),
outputs (none, uncounted: an empty proto) and call site; and writer/trace_batch.py's several calls joined in one
pass are their calls joined one by one."""

from __future__ import annotations

import numpy as np
import pytest

from tensorboard_plugin_dbg.reader import schema
from tensorboard_plugin_dbg.writer import events
from tensorboard_plugin_dbg.writer.execution_layout import ExecutionLayout
from tensorboard_plugin_dbg.writer.trace_batch import TraceBatch, TracePoint

HOST = "host-1.example"
CASES = [  # op type, mode, graph id, stack, input ids, output ids, protos
    ("jit_step", 3, "a" * 32, ["f1", "f2"], [1, -1, 300], [301, 302], [b"\x08\x01", b""]),
    ("jit_step", 4, "b" * 32, [], [], [2**40], [bytes(range(200))]),
    ("jit_noop", 1, "c" * 32, ["only"], [-1], [], []),
    ("", 0, "", [], [], [], []),
]


def _by_protobuf(wall, op_type, mode, graph_id, stack, inputs, outputs, protos, device_id) -> bytes:
    event = schema.DebugEvent(wall_time=wall)
    e = event.execution
    e.op_type, e.num_outputs, e.graph_id, e.tensor_debug_mode = op_type, len(outputs), graph_id, mode
    e.input_tensor_ids.extend(inputs)
    e.output_tensor_ids.extend(outputs)
    e.tensor_protos.extend(protos)
    e.code_location.host_name = HOST
    e.code_location.stack_frame_ids.extend(stack)
    e.output_tensor_device_ids.extend([device_id] * len(outputs))
    return event.SerializeToString()


@pytest.mark.parametrize(("op_type", "mode", "graph_id", "stack", "inputs", "outputs", "protos"), CASES)
def test_an_execution_from_its_layout_is_the_bytes_protobuf_writes(
    op_type, mode, graph_id, stack, inputs, outputs, protos
):
    for device_id in (1, 300):
        layout = ExecutionLayout(op_type, mode, graph_id, HOST, stack, len(outputs), device_id)
        for wall in (1.5e9, 1.7e9 + 0.123):
            want = _by_protobuf(wall, op_type, mode, graph_id, stack, inputs, outputs, protos, device_id)
            assert layout.event(wall, inputs, outputs, protos) == want


def test_the_writer_writes_the_executions_it_is_given_framed(tmp_path):
    writer = events.DebugEventsWriter(str(tmp_path), "jax test")
    layout = ExecutionLayout("jit_f", 3, "g" * 32, writer.host, [], 1, 1)
    writer.executions_framed([events.frame(layout.event(1.5e9 + i, [i], [i + 1], [b""])) for i in range(3)])
    writer.close()
    (path,) = tmp_path.glob("*.execution")
    data = path.read_bytes()
    read = []
    while data:
        length = int.from_bytes(data[:8], "little")
        read.append(schema.DebugEvent.FromString(data[12 : 12 + length]).execution)
        data = data[16 + length :]
    assert [(list(e.input_tensor_ids), list(e.output_tensor_ids)) for e in read] == [([i], [i + 1]) for i in range(3)]


POINTS = [
    TracePoint("g" * 32, "conv_0", 0, 7, "float32", (4, 3)),
    TracePoint("h" * 32, "mul_1", 2, 300, "float16", ()),
]


@pytest.mark.parametrize("largest", [9, 2**21 - 1, 2**21, 2**40])  # a float64 below 2**21 has zero low halves
@pytest.mark.parametrize("mode", ["CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH", "SHAPE"])
def test_several_calls_joined_in_one_pass_are_the_records_one_by_one(mode, largest):
    batch = TraceBatch(POINTS, mode, "/job:localhost/replica:0/task:0/device:CPU:0")
    width = {"CURT_HEALTH": 1, "CONCISE_HEALTH": 3, "FULL_HEALTH": 6}.get(mode)
    rng = np.random.default_rng(3)
    walls = [1.5e9, 1.5e9 + 0.25, 1.7e9]
    counts = rng.integers(0, 9, (len(walls), len(POINTS), width)) if width else None
    if counts is not None:
        counts[1, 0, -1] = largest
    one_by_one = [b"".join(batch.records(w, None if counts is None else counts[i])) for i, w in enumerate(walls)]
    assert batch.joined_calls(walls, counts) == b"".join(one_by_one)
    assert b"".join(batch.joined(w, None if counts is None else counts[i]) for i, w in enumerate(walls)) == b"".join(
        one_by_one
    )
    assert batch.joined_calls([], counts) == b""


@pytest.mark.parametrize("zeroed", [(0, 1, 2), (0, 1, 2, 3, 4, 5), (4,), ()])  # a healthy step: no NaN, no inf
@pytest.mark.parametrize("mode", ["CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH"])
def test_calls_whose_count_columns_are_zero_are_the_records_one_by_one(mode, zeroed):
    """writer/call_fill.py writes and CRCs only the count columns some record has nonzero: each choice of them (and
    a pass after another choice, the layouts kept per choice) gives the records one by one."""
    batch = TraceBatch(POINTS, mode, "/job:localhost/replica:0/task:0/device:CPU:0")
    width = {"CURT_HEALTH": 1, "CONCISE_HEALTH": 3, "FULL_HEALTH": 6}[mode]
    walls = [1.5e9 + 0.5, 1.7e9 + 1e-6]
    rng = np.random.default_rng(5)
    for largest in (9, 2**30 + 1):  # 2**30 + 1: a float64 whose low half is not zeros
        counts = rng.integers(1, 9, (len(walls), len(POINTS), width))
        counts[:, :, [c for c in zeroed if c < width]] = 0
        counts[0, 1, -1] = largest if -1 + width not in zeroed else 0
        one_by_one = [b"".join(batch.records(w, counts[i])) for i, w in enumerate(walls)]
        assert batch.joined_calls(walls, counts) == b"".join(one_by_one)

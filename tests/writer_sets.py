"""File sets written by the package's own tfdbg2 writer (no TensorFlow), and what each record was written with.

`write(dump_dir)` writes one file set that uses every record kind and every debug mode TensorFlow 2.21 accepts: two
graphs (one nested in the other, linked as a tf.function call is), ops with inputs, consumers and stack frames in this
file, a device, executions in each mode (eager vectors, mixed with the empty placeholder of a non-float output) and
graph execution traces in each summary mode over float16/bfloat16/float32/float64 tensors holding -inf, +inf, NaN,
negatives, zeros and positives. It returns the expected records as plain values, the shape tests/oracle.py prints.
"""

from __future__ import annotations

import math
import os
import sys

import ml_dtypes
import numpy as np

from tensorboard_plugin_dbg.writer import summaries
from tensorboard_plugin_dbg.writer.events import DebugEventsWriter

HERE = os.path.abspath(__file__)
DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
SUMMARY_MODES = ("NO_TENSOR", "CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH", "SHAPE")


def tensors() -> list[np.ndarray]:
    base = np.array([[-np.inf, -2.0, 0.0], [np.nan, 3.5, np.inf]])
    return [
        base.astype(np.float32),
        base.astype(np.float16),
        base.astype(ml_dtypes.bfloat16),
        np.array([1.0, -0.0, 2.0], np.float64),
        np.arange(2 * 1 * 2 * 1 * 2 * 1 * 2, dtype=np.float32).reshape(2, 1, 2, 1, 2, 1, 2),  # rank 7
        np.float32(np.nan),  # a scalar
    ]


def _num(x: float) -> float | str:
    return repr(x) if isinstance(x, float) and not math.isfinite(x) else x


def _summary(mode: str, tensor_id: int, x: np.ndarray) -> bytes:
    counts = summaries.counts_of(x) if mode in summaries.HEALTH_MODES else None
    vec = summaries.debug_vector(mode, tensor_id, np.asarray(x).dtype.name, np.shape(x), counts)
    return summaries.tensor_proto(vec)


def _vector(mode: str, tensor_id: int, x: np.ndarray) -> list:
    counts = summaries.counts_of(x) if mode in summaries.HEALTH_MODES else None
    vec = summaries.debug_vector(mode, tensor_id, np.asarray(x).dtype.name, np.shape(x), counts)
    return [_num(float(v)) for v in vec]


def write(dump_dir: str) -> dict:
    w = DebugEventsWriter(dump_dir, "writer_sets 1.0", circular_buffer_size=-1)
    frames = [(HERE, 60, "write"), (HERE, 61, "inner_step")]
    stack = w.stack(frames)
    device_id = w.device_id(DEVICE)
    w.graph("g-outer", "")
    w.graph("g-inner", "inner_fn", outer_context_id="g-outer")
    xs = tensors()
    ids = w.tensor_ids(len(xs) + 1)
    ops: dict[str, dict] = {}
    for i in range(len(xs)):
        name = f"inner/op_{i}"
        inputs = [f"inner/op_{i - 1}:0"] if i else []
        w.op("g-inner", "inner_fn", f"Type{i}", name, inputs, [ids[i]], stack)
        ops[f"g-inner/{name}"] = {
            "op_type": f"Type{i}",
            "input_names": inputs,
            "output_tensor_ids": [ids[i]],
            "num_outputs": 1,
            "stack_frame_ids": stack,
            "host": w.host,
            "consumers": [[0, name.replace(f"op_{i}", f"op_{i + 1}"), 0]] if i + 1 < len(xs) else [],
        }
    w.op("g-outer", "", "inner_fn", "call", [], [ids[-1]], stack[:1])
    ops["g-outer/call"] = {
        "op_type": "inner_fn",
        "input_names": [],
        "output_tensor_ids": [ids[-1]],
        "num_outputs": 1,
        "stack_frame_ids": stack[:1],
        "host": w.host,
        "consumers": [],
    }
    executions, traces = [], []
    for mode in SUMMARY_MODES:
        number = summaries.mode_number(mode)
        for i, x in enumerate(xs):
            w.trace("g-inner", f"inner/op_{i}", 0, number, _summary(mode, ids[i], x), DEVICE)
            traces.append(
                {
                    "op_type": f"Type{i}",
                    "op_name": f"inner/op_{i}",
                    "output_slot": 0,
                    "graph_id": "g-inner",
                    "graph_ids": ["g-outer", "g-inner"],
                    "mode": number,
                    "device_name": DEVICE,
                    "value": None if mode == "NO_TENSOR" else _vector(mode, ids[i], x),  # TF reads NO_TENSOR so
                }
            )
        outputs = [xs[0], np.arange(3, dtype=np.int32)]  # a float and an int output
        protos = [_summary(mode, -1, x) if summaries.is_instrumented(mode, x.dtype.name) else b"" for x in outputs]
        if mode == "NO_TENSOR":
            protos = []
        out_ids = w.tensor_ids(2)
        w.execution(
            "inner_fn",
            number,
            graph_id="g-inner",
            input_tensor_ids=[ids[0]],
            output_tensor_ids=out_ids,
            tensor_protos=protos,
            stack_frame_ids=stack,
            output_tensor_device_ids=[device_id, device_id],
        )
        values = None if mode == "NO_TENSOR" else [_vector(mode, -1, outputs[0]), None]
        if mode == "SHAPE":
            values = [_vector(mode, -1, x) for x in outputs]
        executions.append(
            {
                "op_type": "inner_fn",
                "output_tensor_device_ids": [device_id, device_id],
                "host": w.host,
                "stack_frame_ids": stack,
                "mode": number,
                "graph_id": "g-inner",
                "input_tensor_ids": [ids[0]],
                "output_tensor_ids": out_ids,
                "values": values,
            }
        )
    w.close()
    with open(HERE, encoding="utf-8") as f:
        lines = f.read().splitlines()
    return {
        "run_id": w.run_id,
        "tf_version": "writer_sets 1.0",
        "executions": executions,
        "traces": traces,
        "graphs": {
            "g-outer": {"name": None, "outer": None, "inner": ["g-inner"]},  # TF's reader: empty is None
            "g-inner": {"name": "inner_fn", "outer": "g-outer", "inner": []},
        },
        "ops": ops,
        "source_files": [[w.host, HERE, lines]],
        "stack_frames": {stack[0]: [w.host, HERE, 60, "write"], stack[1]: [w.host, HERE, 61, "inner_step"]},
        "devices": {str(device_id): DEVICE},
    }


if __name__ == "__main__":
    write(sys.argv[1])

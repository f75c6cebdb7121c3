"""A pair of eager-only dumps for bench/compare.py's eager case: N executions each, written by TensorFlow's own
native DebugEventsWriter (as bench/generate.py writes its executions), FULL_HEALTH, op types cycling through five
eager ops. Run B's zero count differs from A's from the middle execution on, so about half the pairs differ and
the first divergence is execution N // 2. Cached under bench/cache/eager-<N>-<a|b> (a `.complete` marker)."""

from __future__ import annotations

import os

import numpy as np

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
OP_TYPES = ("Square", "Mul", "AddV2", "Sum", "Sqrt")
T0 = 1_700_000_000.0


def ensure(n: int, variant: str) -> str:
    out = os.path.join(BENCH_DIR, "cache", f"eager-{n}-{variant}")
    if os.path.exists(os.path.join(out, ".complete")):
        return out
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    from tensorflow.core.protobuf import debug_event_pb2 as pb
    from tensorflow.python.client import _pywrap_debug_events_writer as native
    from tensorflow.python.debug.lib import debug_events_writer

    os.makedirs(out, exist_ok=True)
    writer = debug_events_writer.DebugEventsWriter(out, f"eager-bench-{variant}", circular_buffer_size=-1)
    writer.RegisterDeviceAndGetId("/job:localhost/replica:0/task:0/device:CPU:0")
    writer.FlushNonExecutionFiles()
    for k in range(n):
        zeros = 1 if variant == "b" and k >= n // 2 else 0
        # FULL_HEALTH: tensor id, device id, dtype (float32), rank, size, -inf, +inf, nan, negative, zero, positive
        vec = np.array([k, 1, 1, 1, 4, 0, 0, 0, 0, zeros, 4 - zeros], dtype="<f8")
        ex = pb.Execution(
            op_type=OP_TYPES[k % len(OP_TYPES)],
            num_outputs=1,
            tensor_debug_mode=4,
            input_tensor_ids=[k],
            output_tensor_ids=[k + 1],
            output_tensor_device_ids=[0],
        )
        tp = ex.tensor_protos.add()
        tp.dtype = 2  # DT_DOUBLE
        tp.tensor_shape.dim.add().size = 11
        tp.tensor_content = vec.tobytes()
        native.WriteExecution(out, pb.DebugEvent(wall_time=T0 + k * 1e-4, execution=ex))
    writer.FlushExecutionFiles()
    writer.FlushNonExecutionFiles()
    writer.Close()
    with open(os.path.join(out, ".complete"), "w") as f:
        f.write(str(n))
    return out

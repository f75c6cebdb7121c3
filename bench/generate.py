"""Generate a large, realistic tfdbg2 dump for the benchmarks.

    python bench/generate.py --traces N [--out DIR] [--nonfinite-from FRACTION] [--verify]

Which bytes TensorFlow wrote, exactly:
  * TF's own `DebugEventsWriter` (circular buffer off) writes the metadata record, every source file (the text of
    `bench/model_program.py` and of 8 real TF modules), every stack frame, both debugged graphs, the debugged
    device, all ~2,000 graph_op_creation records (input_names chains, output_tensor_ids, code locations), every
    execution (~300: eager ops and `train_step` calls), and the first two steps (~3,800) of graph execution traces.
  * `bench/record_copier.py` appends every later trace to TF's `.graph_execution_traces` file: a copy of the
    step's records as serialized by protobuf with only `wall_time` and the six FULL_HEALTH counts replaced, and the
    data CRC-32C recomputed. The generator checks that its copy of the two TF-written steps is byte-identical to
    what TF wrote before appending anything.

The dump's content is described in `bench/dump_model.py`. Without --out the dump goes to `bench/cache/<N>` (or
`bench/cache/<N>-nf<FRACTION>`), which is reused when it holds a `.complete` marker for the same parameters.
10 M traces (~2.3 GB) take about a minute or two.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import struct
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import dump_model as dm
from record_copier import StepTemplate

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
DEFAULT_NONFINITE_FROM = 0.5
EXECUTIONS = 300
TF_STEPS = 2  # steps of traces written through DebugEventsWriter itself
WALL_SENTINEL = struct.pack("<d", 987654321.123456789)
COUNT_SENTINEL = struct.pack("<6d", 1.125, 2.25, 3.375, 4.5, 5.625, 6.75)
CHUNK_STEPS = 256  # ~100 MB of records per write


def default_out(traces: int, nonfinite_from: float) -> str:
    name = str(traces) if nonfinite_from == DEFAULT_NONFINITE_FROM else f"{traces}-nf{nonfinite_from:g}"
    return os.path.join(BENCH_DIR, "cache", name)


def _params(traces: int, nonfinite_from: float) -> dict:
    return {"traces": traces, "nonfinite_from": nonfinite_from, "format": 1}


def is_complete(out: str, traces: int, nonfinite_from: float) -> bool:
    try:
        with open(os.path.join(out, ".complete")) as f:
            return json.load(f) == _params(traces, nonfinite_from)
    except (OSError, ValueError):
        return False


def _trace_proto(pb, op: dm.Op, wall_time: float, vector: np.ndarray):
    ev = pb.DebugEvent(wall_time=wall_time)
    t = ev.graph_execution_trace
    t.tfdbg_context_id = dm.INNER_GRAPH_ID
    t.op_name = op.name
    t.tensor_debug_mode = 4  # FULL_HEALTH
    t.device_name = dm.DEVICE
    t.tensor_proto.dtype = 2  # DT_DOUBLE
    t.tensor_proto.tensor_shape.dim.add().size = 11
    t.tensor_proto.tensor_content = vector.astype("<f8").tobytes()
    return ev


def _health_tensor_proto(tp, vector: np.ndarray) -> None:
    tp.dtype = 2
    tp.tensor_shape.dim.add().size = 11
    tp.tensor_content = vector.astype("<f8").tobytes()


def write_with_tf(out: str, program: dm.Program, traces: int, bad_trace: int) -> None:
    """Everything except the traces after the first TF_STEPS steps, through TF's DebugEventsWriter."""
    from tensorflow.core.protobuf import debug_event_pb2 as pb
    from tensorflow.python.client import _pywrap_debug_events_writer as native
    from tensorflow.python.debug.lib import debug_events_writer

    writer = debug_events_writer.DebugEventsWriter(out, dm.RUN_ID, circular_buffer_size=-1)
    # The Python wrapper stamps time.time() on every event; the native writer underneath takes whole DebugEvents,
    # so calling it directly keeps our deterministic wall times (same C++ writer, same bytes otherwise).
    clock = [dm.T0]

    def write(method: str, **what) -> None:
        clock[0] += 1e-4
        getattr(native, method)(out, pb.DebugEvent(wall_time=what.pop("wall_time", clock[0]), **what))

    for path, lines in program.source_files:
        write("WriteSourceFile", source_file=pb.SourceFile(file_path=path, host_name=dm.HOST, lines=lines))
    for frame_id, file_index, line, func in program.frames:
        sf = pb.StackFrameWithId(id=frame_id)
        sf.file_line_col.file_index, sf.file_line_col.line, sf.file_line_col.func = file_index, line, func
        write("WriteStackFrameWithId", stack_frame_with_id=sf)
    writer.RegisterDeviceAndGetId(dm.DEVICE)  # TF writes the debugged_device record itself
    write("WriteDebuggedGraph", debugged_graph=pb.DebuggedGraph(graph_id=dm.OUTER_GRAPH_ID))
    write(
        "WriteDebuggedGraph",
        debugged_graph=pb.DebuggedGraph(
            graph_id=dm.INNER_GRAPH_ID, graph_name=dm.INNER_GRAPH_NAME, outer_context_id=dm.OUTER_GRAPH_ID
        ),
    )
    for op in program.ops:
        goc = pb.GraphOpCreation(
            op_type=op.op_type,
            op_name=op.name,
            graph_name=dm.INNER_GRAPH_NAME,
            graph_id=dm.INNER_GRAPH_ID,
            input_names=op.inputs,
            num_outputs=1,
            output_tensor_ids=[op.tensor_id],
        )
        goc.code_location.host_name = dm.HOST
        goc.code_location.stack_frame_ids.extend(op.frame_ids)
        write("WriteGraphOpCreation", graph_op_creation=goc)
    writer.FlushNonExecutionFiles()

    n_ops = len(program.traced)
    total_steps = -(-traces // n_ops)
    # Executions: a few eager ops creating the weights, then `train_step` calls spread over the run, each written
    # right after its step's traces (as TF does), carrying the loss's health.
    eager_types = ["RandomStandardNormal", "Mul", "AddV2", "VarHandleOp", "AssignVariableOp"]
    n_eager = 20
    call_steps = np.unique(np.linspace(0, total_steps - 1, EXECUTIONS - n_eager).astype(np.int64))
    loss = next(op for op in program.traced if op.op_type == "Neg")
    user_frames = loss.frame_ids[:2]
    for k in range(n_eager):
        op_type = eager_types[k % len(eager_types)]
        ex = pb.Execution(
            op_type=op_type,
            num_outputs=0 if op_type == "AssignVariableOp" else 1,
            tensor_debug_mode=4,
            input_tensor_ids=[k],
            output_tensor_ids=[k + 1],
            output_tensor_device_ids=[1],
        )
        if op_type not in ("VarHandleOp", "AssignVariableOp"):  # resource outputs get no tensor proto
            vec = np.array([-1, -1, 1, 2, 16384, 0, 0, 0, 8100, 0, 8284], dtype=np.float64)
            _health_tensor_proto(ex.tensor_protos.add(), vec)
        ex.code_location.host_name = dm.HOST
        ex.code_location.stack_frame_ids.extend(user_frames)
        write("WriteExecution", wall_time=dm.T0 + 1 + k * 1e-3, execution=ex)
    loss_col = program.traced.index(loss)
    for s in call_steps:
        vec = dm.debug_vectors(program, dm.health_counts(program, int(s), 1, bad_trace))[0, loss_col].copy()
        vec[0] = -1  # eager tensor ids are not graph tensor ids
        ex = pb.Execution(
            op_type="__inference_train_step_1234",
            num_outputs=1,
            graph_id=dm.INNER_GRAPH_ID,
            tensor_debug_mode=4,
            input_tensor_ids=[1, 2],
            output_tensor_ids=[1000 + int(s)],
            output_tensor_device_ids=[1],
        )
        _health_tensor_proto(ex.tensor_protos.add(), vec)
        ex.code_location.host_name = dm.HOST
        ex.code_location.stack_frame_ids.extend(user_frames)
        end = dm.trace_wall_times(np.array([(s + 1) * n_ops - 1]), n_ops)[0]
        write("WriteExecution", wall_time=float(end + 1e-5), execution=ex)

    first = min(traces, TF_STEPS * n_ops)
    vectors = dm.debug_vectors(program, dm.health_counts(program, 0, TF_STEPS, bad_trace)).reshape(-1, 11)
    walls = dm.trace_wall_times(np.arange(first), n_ops)
    for i in range(first):
        native.WriteGraphExecutionTrace(out, _trace_proto(pb, program.traced[i % n_ops], float(walls[i]), vectors[i]))
    writer.FlushExecutionFiles()
    writer.FlushNonExecutionFiles()
    writer.Close()


def step_template(program: dm.Program) -> StepTemplate:
    from tensorflow.core.protobuf import debug_event_pb2 as pb

    wall = struct.unpack("<d", WALL_SENTINEL)[0]
    records = []
    for op in program.traced:
        vec = np.array(
            [op.tensor_id, -1, op.dtype, len(op.shape), op.size, *struct.unpack("<6d", COUNT_SENTINEL)],
            dtype=np.float64,
        )
        records.append(_trace_proto(pb, op, wall, vec).SerializeToString())
    return StepTemplate(records, WALL_SENTINEL, COUNT_SENTINEL)


def _steps_bytes(program, template, first_step, steps, bad_trace) -> np.ndarray:
    n_ops = len(program.traced)
    counts = dm.health_counts(program, first_step, steps, bad_trace)
    stacked = np.stack([counts[k] for k in ("ninf", "pinf", "nan", "neg", "zero", "pos")], axis=2)
    index = first_step * n_ops + np.arange(steps * n_ops).reshape(steps, n_ops)
    return template.fill(dm.trace_wall_times(index, n_ops), stacked)


def generate(out: str, traces: int, nonfinite_from: float) -> None:
    started = time.monotonic()
    program = dm.build_program()
    n_ops = len(program.traced)
    bad_trace = int(traces * nonfinite_from)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    write_with_tf(out, program, traces, bad_trace)
    trace_file = glob.glob(os.path.join(out, "*.graph_execution_traces"))[0]
    template = step_template(program)
    with open(trace_file, "rb") as f:
        written_by_tf = f.read()
    ours = _steps_bytes(program, template, 0, TF_STEPS, bad_trace).tobytes()
    if traces >= TF_STEPS * n_ops and ours != written_by_tf:
        raise SystemExit("replicated records differ from the ones TF wrote; refusing to continue")
    print(
        f"TF wrote the structure and {min(traces, TF_STEPS * n_ops)} traces in {time.monotonic() - started:.1f}s",
        flush=True,
    )
    with open(trace_file, "ab") as f:
        step = TF_STEPS
        total_steps = -(-traces // n_ops)
        while step < total_steps:
            steps = min(CHUNK_STEPS, total_steps - step)
            chunk = _steps_bytes(program, template, step, steps, bad_trace)
            last = min(traces - step * n_ops, steps * n_ops)  # the final step may be partial
            end = (last // n_ops) * len(template.bytes) + (
                template.record_ends[last % n_ops - 1] if last % n_ops else 0
            )
            f.write(chunk[:end].data)
            step += steps
    with open(os.path.join(out, ".complete"), "w") as f:
        json.dump(_params(traces, nonfinite_from), f)
    size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(out, "tfdbg_events.*")))
    print(f"generated {traces} traces ({size / 1e6:.0f} MB) in {time.monotonic() - started:.1f}s -> {out}", flush=True)


def verify(out: str, traces: int, nonfinite_from: float, samples: int = 5) -> None:
    """Read the dump back with TF's own DebugDataReader: counts, and a few traces' values."""
    from tensorflow.python.debug.lib import debug_events_reader

    program = dm.build_program()
    n_ops = len(program.traced)
    bad_trace = int(traces * nonfinite_from)
    started = time.monotonic()
    with debug_events_reader.DebugDataReader(out) as reader:
        reader.update()
        digests = reader.graph_execution_traces(digest=True)
        assert len(digests) == traces, (len(digests), traces)
        assert len(reader.executions(digest=True)) <= EXECUTIONS
        assert len(reader.source_file_list()) == len(program.source_files)
        for i in np.linspace(0, traces - 1, samples).astype(np.int64):
            step, col = divmod(int(i), n_ops)
            want = dm.debug_vectors(program, dm.health_counts(program, step, 1, bad_trace))[0, col]
            got = reader.graph_execution_trace_to_tensor_value(digests[i])
            assert np.array_equal(np.asarray(got), want), (i, got, want)
            assert digests[i].op_name == program.traced[col].name
            assert digests[i].op_type == program.traced[col].op_type
            assert abs(digests[i].wall_time - dm.trace_wall_times(np.array([i]), n_ops)[0]) < 1e-6
    print(
        f"verified with DebugDataReader: {traces} traces, {samples} sampled values ({time.monotonic() - started:.1f}s)",
        flush=True,
    )


def traced_ops_per_step() -> int:
    return len(dm.build_program().traced)


def ensure(traces: int, out: str | None = None, nonfinite_from: float = DEFAULT_NONFINITE_FROM) -> str:
    """The dump directory for these parameters, generated unless a complete one is there."""
    out = out or default_out(traces, nonfinite_from)
    if not is_complete(out, traces, nonfinite_from):
        generate(out, traces, nonfinite_from)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, required=True)
    ap.add_argument("--out", default=None, help="dump directory (default bench/cache/<N>)")
    ap.add_argument(
        "--nonfinite-from",
        type=float,
        default=DEFAULT_NONFINITE_FROM,
        help="fraction of the run after which -inf then NaN appear (>= 1: never)",
    )
    ap.add_argument("--verify", action="store_true", help="read it back with TF's DebugDataReader")
    ap.add_argument("--force", action="store_true", help="regenerate even if a complete dump is there")
    args = ap.parse_args(argv)
    out = args.out or default_out(args.traces, args.nonfinite_from)
    if args.force or not is_complete(out, args.traces, args.nonfinite_from):
        generate(out, args.traces, args.nonfinite_from)
    else:
        print(f"reusing {out}", flush=True)
    if args.verify:
        verify(out, args.traces, args.nonfinite_from)


if __name__ == "__main__":
    main()

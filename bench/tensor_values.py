"""The Tensor Values routes on a big FULL_TENSOR dump (issue #16's speed targets).

    python bench/tensor_values.py [--steps 4] [--keep DIR]

Writes a dump through TF's own DebugEventsWriter: one graph op whose FULL_TENSOR output is a float32 tensor of
shape (64, 1024, 1024) (256 MiB), traced STEPS times (4: ~1 GiB of traces), with NaN and ±inf at known places.
Then, each in a fresh process (so one measurement's memory is not another's): indexing it against reading its
bytes; the first and the cached whole-tensor summary (stats + histogram + non-finite positions); 64 x 64 slice
windows, in-process and through the route; peak and retained memory. The dump goes to a temporary folder under
bench/cache/ (git-ignored) and is removed at the end unless --keep names a folder to keep it in.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH_DIR)
sys.path.insert(0, ROOT)
sys.path.insert(0, BENCH_DIR)
SHAPE = (64, 1024, 1024)
GRAPH_ID = "tv-bench-graph"
NAN_AT = [(3, 100, 200), (40, 1023, 0), (63, 5, 1023)]
POSINF_AT = [(10, 512, 512)]
NEGINF_AT = [(0, 0, 7)]


def tensor(step: int, finite: bool = False) -> np.ndarray:
    rng = np.random.default_rng(step)
    x = rng.standard_normal(int(np.prod(SHAPE)), dtype=np.float32).reshape(SHAPE)
    if finite:  # the index's worst case: no element flags the row early, so every piece is looked over
        return x
    for at in NAN_AT:
        x[at] = np.nan
    for at in POSINF_AT:
        x[at] = np.inf
    for at in NEGINF_AT:
        x[at] = -np.inf
    return x


def generate(out: str, steps: int, finite: bool = False) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from tensorflow.core.protobuf import debug_event_pb2 as pb
    from tensorflow.python.client import _pywrap_debug_events_writer as native
    from tensorflow.python.debug.lib import debug_events_writer

    writer = debug_events_writer.DebugEventsWriter(out, "tv-bench-run", circular_buffer_size=-1)
    native.WriteDebuggedGraph(out, pb.DebugEvent(wall_time=1.0, debugged_graph=pb.DebuggedGraph(graph_id=GRAPH_ID)))
    op = pb.GraphOpCreation(op_type="Relu", op_name="big", graph_id=GRAPH_ID, num_outputs=1, output_tensor_ids=[1])
    native.WriteGraphOpCreation(out, pb.DebugEvent(wall_time=1.1, graph_op_creation=op))
    writer.FlushNonExecutionFiles()
    for step in range(steps):
        ev = pb.DebugEvent(wall_time=2.0 + step)
        t = ev.graph_execution_trace
        t.tfdbg_context_id, t.op_name, t.tensor_debug_mode = GRAPH_ID, "big", 7
        t.tensor_proto.dtype = 1
        for d in SHAPE:
            t.tensor_proto.tensor_shape.dim.add().size = d
        t.tensor_proto.tensor_content = tensor(step, finite).tobytes()
        native.WriteGraphExecutionTrace(out, ev)
        del ev, t
    writer.FlushExecutionFiles()
    writer.Close()


def _rss() -> tuple[int, int]:
    """(VmRSS, VmHWM) in bytes."""
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024
    return fields["VmRSS"], fields["VmHWM"]


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS


def _read_seconds(out: str) -> tuple[float, int]:
    started, total = time.perf_counter(), 0
    buf = bytearray(8 << 20)
    for name in sorted(os.listdir(out)):
        with open(os.path.join(out, name), "rb", buffering=0) as f:
            while n := f.readinto(buf):
                total += n
    return time.perf_counter() - started, total


def measure_index(out: str) -> dict:
    from tensorboard_plugin_dbg.index.catalog import Catalog
    from tensorboard_plugin_dbg.reader import crc32c

    if os.environ.get(NUMPY_CRC_ENV):
        crc32c.NATIVE = None  # the fallback, as without google-crc32c

    _read_seconds(out)  # the page cache holds it, as for a dump TF just wrote
    read_s, size = min(_read_seconds(out) for _ in range(3))
    rss0, _ = _rss()
    _reset_peak()
    started, cpu = time.perf_counter(), time.process_time()
    run = Catalog(out).runs()[0]
    while not run.done:
        run.refresh()
    index_s, index_cpu = time.perf_counter() - started, time.process_time() - cpu
    _, peak = _rss()
    return {
        "bytes": size,
        "read_s": read_s,
        "index_s": index_s,
        "index_cpu_s": index_cpu,
        "index_peak_mib": (peak - rss0) / 2**20,
        "crc": "numpy" if crc32c.NATIVE is None else "native (google-crc32c)",
    }


def measure_view(out: str) -> dict:
    from werkzeug.test import Client

    from tensorboard_plugin_dbg.analysis import tensor_values
    from tensorboard_plugin_dbg.api.app import ApiApp
    from tensorboard_plugin_dbg.index.catalog import Catalog

    catalog = Catalog(out)
    run = catalog.runs()[0]
    while not run.done:
        run.refresh()
    tensor_bytes = int(np.prod(SHAPE)) * 4
    rss0, _ = _rss()
    _reset_peak()
    started, cpu = time.perf_counter(), time.process_time()
    first = tensor_values.tensor(run, "graph", 0, None, None, 64)
    first_s, first_cpu = time.perf_counter() - started, time.process_time() - cpu
    rss1, peak = _rss()
    started = time.perf_counter()
    again = tensor_values.tensor(run, "graph", 0, None, None, 64)
    cached_s = time.perf_counter() - started
    assert again["stats"] == first["stats"] and first["stats"]["nan"] == len(NAN_AT)
    assert first["nonfinite"]["positions"] == sorted(map(list, NAN_AT + POSINF_AT + NEGINF_AT))
    rng = np.random.default_rng(0)
    specs = [f"{k},{r}:{r + 64},{c}:{c + 64}" for k, r, c in rng.integers(0, [64, 960, 960], size=(100, 3)).tolist()]
    loc = run.tensor_record("graph", 0).location
    in_process = []
    for spec in specs:
        t0 = time.perf_counter()
        tensor_values.slice_values(loc, spec)
        in_process.append(time.perf_counter() - t0)
    client = Client(ApiApp(lambda: catalog))  # dispatch, parameters, the JSON encoder: the route minus HTTP
    routed = []
    for spec in specs:
        t0 = time.perf_counter()
        resp = client.get(f"/data/plugin/dbg/tensor?run={run.name}&source=graph&index=0&slice={spec}")
        assert resp.status_code == 200, resp.get_data()[:300]
        routed.append(time.perf_counter() - t0)
    rss2, _ = _rss()
    ms = lambda xs, q: 1000 * float(np.quantile(xs, q))  # noqa: E731
    return {
        "tensor_mib": tensor_bytes / 2**20,
        "summary_first_s": first_s,
        "summary_first_cpu_s": first_cpu,
        "summary_cached_ms": cached_s * 1000,
        "summary_peak_mib": (peak - rss0) / 2**20,
        "retained_after_summary_mib": (rss1 - rss0) / 2**20,
        "retained_after_slices_mib": (rss2 - rss0) / 2**20,
        "slice_in_process_ms": {"p50": ms(in_process, 0.5), "p95": ms(in_process, 0.95), "max": ms(in_process, 1)},
        "slice_route_ms": {"p50": ms(routed, 0.5), "p95": ms(routed, 0.95), "max": ms(routed, 1)},
    }


NUMPY_CRC_ENV = "DBG_BENCH_NUMPY_CRC"


def _child(what: str, out: str, numpy_crc: bool = False) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, BENCH_DIR, os.path.join(ROOT, "tests")]))
    env[NUMPY_CRC_ENV] = "1" if numpy_crc else ""
    proc = subprocess.run(
        [sys.executable, __file__, "--child", what, out], env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=4, help="traces of the 256 MiB tensor (4: ~1 GiB)")
    ap.add_argument("--keep", help="write the dump here and keep it")
    ap.add_argument("--reps", type=int, default=3, help="index measurements (fresh process each)")
    ap.add_argument("--numpy-crc", action="store_true", help="index with the numpy CRC-32C (no google-crc32c)")
    ap.add_argument("--index-only", action="store_true", help="only the index figures (no summary, no windows)")
    ap.add_argument("--finite", action="store_true", help="no NaN/inf in the tensor (implies --index-only)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--generate", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.generate:
        generate(args.generate, args.steps, args.finite)
        return
    if args.child:
        what, out = args.child
        print(json.dumps(measure_index(out) if what == "index" else measure_view(out)))
        return
    os.makedirs(os.path.join(BENCH_DIR, "cache"), exist_ok=True)
    out = args.keep or tempfile.mkdtemp(prefix="tensor-values-", dir=os.path.join(BENCH_DIR, "cache"))
    try:
        os.makedirs(out, exist_ok=True)
        if not os.listdir(out):
            started = time.perf_counter()
            cmd = [sys.executable, __file__, "--generate", out, "--steps", str(args.steps)]
            subprocess.run(cmd + (["--finite"] if args.finite else []), check=True)
            print(f"dump written in {time.perf_counter() - started:.1f} s: {out}")
        index = [_child("index", out, args.numpy_crc) for _ in range(args.reps)]
        view = None if args.index_only or args.finite else _child("view", out)
    finally:
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)
    report(index, view)


def _ms(d: dict) -> str:
    return " / ".join(f"{d[k]:.2f}" for k in ("p50", "p95", "max")) + " ms"


def report(index: list[dict], view: dict | None) -> None:
    size, crc = index[0]["bytes"], index[0]["crc"]
    print(f"\ndump: {size / 2**30:.2f} GiB of FULL_TENSOR traces ({size:,} bytes); CRC-32C: {crc}")
    index_rows = [
        ("read the dump's bytes (page cache), best of 3", f"{min(r['read_s'] for r in index):.3f} s", ""),
        (
            "index it (each run; CPU)",
            ", ".join(f"{r['index_s']:.2f} ({r['index_cpu_s']:.2f})" for r in index) + " s",
            "",
        ),
        ("index / read", ", ".join(f"{r['index_s'] / r['read_s']:.1f}" for r in index) + "x", "<= 2x"),
        ("index peak memory above the start", f"{max(r['index_peak_mib'] for r in index):.0f} MiB", ""),
    ]
    print("| figure | value | target |\n|---|---|---|")
    for row in index_rows:
        print("| " + " | ".join(row) + " |")
    if view is not None:
        _report_view(view)
    os.makedirs(os.path.join(BENCH_DIR, "results"), exist_ok=True)
    with open(os.path.join(BENCH_DIR, "results", "tensor_values.json"), "w") as f:
        json.dump({"index": index, "view": view}, f, indent=1)


def _report_view(view: dict) -> None:
    tmib = view["tensor_mib"]
    peak = view["summary_peak_mib"]
    rows = [
        (
            "stats + histogram + positions, first time (CPU)",
            f"{view['summary_first_s']:.2f} ({view['summary_first_cpu_s']:.2f}) s",
            "<= 2 s",
        ),
        ("same, cached", f"{view['summary_cached_ms']:.3f} ms", ""),
        ("peak memory of the first summary", f"{peak:.0f} MiB ({peak / tmib:.2f}x the tensor)", "<= 2x"),
        (
            "memory kept after it / after 100 windows",
            f"{view['retained_after_summary_mib']:.1f} / {view['retained_after_slices_mib']:.1f} MiB",
            "released",
        ),
        ("64 x 64 window, in process (p50 / p95 / max)", _ms(view["slice_in_process_ms"]), "<= 50 ms"),
        ("64 x 64 window, through the route (p50 / p95 / max)", _ms(view["slice_route_ms"]), "<= 50 ms"),
    ]
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()

"""How fast Source Code's op markers are answered on a ~21 k-op graph (index/line_ops.py, analysis/source_lines.py),
in-process.

    .venv/bin/python bench/source_lines.py [--blocks 4000] [--reps 30]

The dump is bench/neighborhood.py's (bench/graph_program.py, cached under bench/cache/graph-<blocks>): one
tf.function whose ~21 k ops are made by a handful of lines of one loop, all through the one call line. Timed: the
(file, line) -> ops map (built once per (ops, frames, sources) count), the ops' health (once per index version), a
file's per-line counts (source_line_counts), and a page of a line's ops (line_ops) on the line with the most ops.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

from neighborhood import ensure_dump  # noqa: E402

from tensorboard_plugin_dbg.analysis import source_lines  # noqa: E402
from tensorboard_plugin_dbg.index import line_ops  # noqa: E402
from tensorboard_plugin_dbg.index.catalog import Catalog  # noqa: E402


def _timed(fn, reps: int) -> tuple[float, float]:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - t))
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=4000)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args(argv)
    catalog = Catalog(ensure_dump(args.blocks))
    (run,) = catalog.runs()
    while not run.done:
        catalog.refresh()
    print(f"dump: {len(run.ops):,} ops, {len(run.frames):,} frames, {run.lengths().traces:,} traces")
    builds, cpu = [], []
    for _ in range(max(3, args.reps // 3)):
        t, c = time.perf_counter(), time.process_time()
        built = line_ops.build(run)
        builds.append(1000 * (time.perf_counter() - t))
        cpu.append(1000 * (time.process_time() - c))
    entries = sum(len(f.lines) for f in built.files.values())
    print(
        f"map build: median {statistics.median(builds):.1f} ms wall, {statistics.median(cpu):.1f} ms CPU "
        f"({built.stacks} distinct stacks, {entries:,} (op, file) entries over {len(built.files)} user files)"
    )
    lib = next(i for i, s in enumerate(run.sources) if s.path.endswith("tensorflow/python/ops/gen_math_ops.py"))
    lib_times = []
    for _ in range(5):
        t = time.perf_counter()
        lib_map = line_ops.build(run, lib)
        lib_times.append(1000 * (time.perf_counter() - t))
    print(
        f"one library file's map (gen_math_ops.py): median {statistics.median(lib_times):.1f} ms "
        f"({len(lib_map.file(lib).lines):,} entries)"
    )
    user = next(i for i, f in enumerate(run.source_files()["files"]) if f["path"].endswith("graph_program.py"))
    table = run.source_line_ops(user)
    health = []
    for _ in range(max(3, args.reps // 5)):
        t = time.perf_counter()
        run.derived.put("line_ops_kind_ops", None, None)  # cold: the kind -> op table too
        source_lines._build_health(run, table.op_keys)
        health.append(1000 * (time.perf_counter() - t))
    print(f"ops' health, cold (kind -> op table + non-finite rows): median {statistics.median(health):.1f} ms")
    warm = []
    for _ in range(max(3, args.reps // 5)):
        t = time.perf_counter()
        source_lines._build_health(run, table.op_keys)
        warm.append(1000 * (time.perf_counter() - t))
    print(f"ops' health, a new index version (non-finite rows only): median {statistics.median(warm):.2f} ms")
    for name in ("line_ops", "line_ops_kind_ops", "line_ops_health"):  # as a fresh run: nothing built yet
        run.derived.put(name, None, None)
    t = time.perf_counter()
    counts = source_lines.line_counts(run, user)
    print(f"first source_line_counts (builds the map and the health): {1000 * (time.perf_counter() - t):.1f} ms")
    med, p95 = _timed(lambda: source_lines.line_counts(run, user), args.reps)
    print(f"source_line_counts: median {med:.2f} ms, p95 {p95:.2f} ms ({len(counts['lines'])} lines)")
    busiest = max(counts["lines"], key=lambda row: row["ops"])
    line = busiest["line"]
    for size in (50, 1000):
        med, p95 = _timed(lambda size=size: source_lines.line_ops(run, user, line, 0, size), args.reps)
        print(f"line_ops line {line} ({busiest['ops']:,} ops), page of {size}: median {med:.2f} ms, p95 {p95:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

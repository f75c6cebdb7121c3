"""Issue #27's speed figures: two 1 M-trace FULL_HEALTH runs of one program compared (target <= 10 s), and the
memory the comparison adds (target <= 2x one run's index).

The pair is `bench/generate.py`'s dump twice: A never goes non-finite (`--nonfinite-from 2`), B does from half the
run on (the default), so every trace before the middle aligns equal and the first divergence is the Log op at the
middle step. Each side is indexed in this process (one read pass, as the CLI does), then compared; peak RSS is
VmHWM, reset (/proc/self/clear_refs) before each phase.

    .venv/bin/python bench/compare.py [--traces 1000000]
    .venv/bin/python bench/compare.py --eager 100000   # an eager-only pair (bench/eager_pair.py), instead

The eager case times the comparison, and the one detail read per execution pair it replaced (the same verdicts,
differences.execution_metric on each pair) on the same pair.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from typing import Any

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, ROOT)


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass  # not Linux / not allowed: VmHWM is then the process's peak so far, an overestimate


def _dump(traces: int, nonfinite_from: float | None) -> str:
    args = [sys.executable, os.path.join(BENCH, "generate.py"), "--traces", str(traces)]
    if nonfinite_from is not None:
        args += ["--nonfinite-from", str(nonfinite_from)]
    subprocess.run(args, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    sys.path.insert(0, BENCH)
    import generate

    return str(
        generate.default_out(traces, generate.DEFAULT_NONFINITE_FROM if nonfinite_from is None else nonfinite_from)
    )


def _index(path: str):
    from tensorboard_plugin_dbg.index.catalog import Catalog

    _reset_peak()
    before = _status("VmRSS")
    t = time.perf_counter()
    run = Catalog(path).runs()[0]
    return run, time.perf_counter() - t, _status("VmRSS") - before


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=1_000_000)
    ap.add_argument("--eager", type=int, default=0, help="compare an eager-only pair of this many executions")
    args = ap.parse_args(argv)
    if args.eager:
        eager(args.eager)
        return
    path_a, path_b = _dump(args.traces, 2.0), _dump(args.traces, None)
    from tensorboard_plugin_dbg.analysis.compare import comparison, document

    run_a, secs_a, mem_a = _index(path_a)
    run_b, secs_b, mem_b = _index(path_b)
    _reset_peak()
    base = _status("VmRSS")
    t = time.perf_counter()
    result = comparison.compare(run_a, run_b)
    secs_compare = time.perf_counter() - t
    doc = document.document(result, listed=50)
    secs_all = time.perf_counter() - t
    extra = _status("VmHWM") - base
    first = doc["first_divergence"]
    print(f"traces: A {len(result.keys_a.key):,}  B {len(result.keys_b.key):,}")
    print(f"index A {secs_a:.1f} s (+{mem_a / 2**20:.0f} MiB RSS), index B {secs_b:.1f} s (+{mem_b / 2**20:.0f} MiB)")
    print(f"compare: {secs_compare:.2f} s; with the first divergence and 50 listed: {secs_all:.2f} s (target <= 10 s)")
    print(
        f"compare's peak RSS over the two indexes: {extra / 2**20:.0f} MiB",
        f"= {extra / max(mem_b, 1):.2f}x one run's index (target <= 2x)",
    )
    print(f"counts: {doc['counts']}")
    _difference_pages(run_b, result)
    where = f"{first['b']['op_name']} occurrence {first['b']['occurrence']}" if first and first["b"] else None
    print(f"first divergence: {first['kind'] if first else None}: {where}; {first['metric'] if first else ''}")


def _difference_pages(run_b: Any, result: Any) -> None:
    """Graph Execution's difference column as the `compare_rows` route pages it: B's differing rows found once
    (cached by the route beside the comparison), then pages of 200 rows, divergent only, at the start, middle and
    end, each with every row's difference."""
    import numpy as np

    from tensorboard_plugin_dbg.analysis.compare import rows

    t = time.perf_counter()
    divergent = rows.divergent_rows(result)
    secs_rows = time.perf_counter() - t
    pages = []
    for begin in (0, len(divergent) // 2, max(0, len(divergent) - 200)):
        t = time.perf_counter()
        page = run_b.graph_executions(begin, begin + 200, within=divergent)
        rows.differences(result, np.array([r["index"] for r in page["rows"]], np.int64))
        pages.append(1000 * (time.perf_counter() - t))
    print(
        f"difference column: B's {len(divergent):,} differing rows found in {secs_rows * 1000:.0f} ms (once);"
        f" a 200-row divergent-only page with its differences: {', '.join(f'{ms:.0f}' for ms in pages)} ms"
    )


def eager(n: int) -> None:
    sys.path.insert(0, BENCH)
    import eager_pair

    from tensorboard_plugin_dbg.analysis.compare import comparison, differences, document

    run_a, secs_a, _mem_a = _index(eager_pair.ensure(n, "a"))
    run_b, secs_b, _mem_b = _index(eager_pair.ensure(n, "b"))
    t = time.perf_counter()
    result = comparison.compare(run_a, run_b)
    doc = document.document(result, listed=50)
    secs_compare = time.perf_counter() - t
    t = time.perf_counter()
    pairs = zip(result.execs.a.tolist(), result.execs.b.tolist())
    before = sum(bool(differences.execution_metric(run_a, run_b, a, b, result.tol)) for a, b in pairs)
    secs_before = time.perf_counter() - t
    first = doc["first_divergence"]
    print(f"eager executions: A {len(result.exec_names_a):,}  B {len(result.exec_names_b):,}")
    print(f"index A {secs_a:.1f} s, index B {secs_b:.1f} s")
    print(f"compare (with the first divergence and 50 listed): {secs_compare:.2f} s")
    print(f"one detail read per execution pair, as before: {secs_before:.2f} s ({before:,} pairs differ)")
    print(f"counts: {doc['counts']}")
    print(f"first divergence: {first['kind'] if first else None}: {first['b'] if first else None}")


if __name__ == "__main__":
    main()

"""Many hosts (#28): a dump's traces split over 8 hosts of one run (one run id) against the same traces on one host.

    python bench/hosts.py [--dump DIR] [--hosts 8]

The dump's graph execution traces are cut at record boundaries into `--hosts` consecutive parts, each written as the
traces file of its own file set (`tfdbg_events.<epoch>.worker-K.*`, the other files copied: one run id), in a
temporary folder removed at the end. Each logdir is indexed in a fresh process: the first pass's wall time and peak
RSS (VmHWM), per trace; then the `graph_executions` host filter's latency through the API app (first request, which
builds the host's rows, and the median of 20 later ones).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_MEASURE = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[2])
from api_helpers import make_app, ok
from werkzeug.test import Client
from tensorboard_plugin_dbg.index.catalog import Catalog
t = time.perf_counter(); catalog = Catalog(sys.argv[1]); seconds = time.perf_counter() - t
run = catalog.runs()[0]
traces = run.info()["counts"]["graph_executions"]
hwm = int([l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]) * 1024
out = {"traces": traces, "hosts": run.info()["hosts"], "index_s": seconds, "peak_rss": hwm}
app, plugin = make_app(sys.argv[1])
client = Client(app)
while not all(r["status"]["done"] for r in ok(client, "runs")["runs"] or [{"status": {"done": False}}]):
    time.sleep(0.1)
host = out["hosts"][-1]
t = time.perf_counter(); first = ok(client, "graph_executions", run=run.name, begin=0, end=100, host=host)
out["host_filter_first_ms"] = (time.perf_counter() - t) * 1000
later = []
for i in range(20):
    t = time.perf_counter(); ok(client, "graph_executions", run=run.name, begin=i * 100, end=i * 100 + 100, host=host)
    later.append((time.perf_counter() - t) * 1000)
out["host_filter_median_ms"] = statistics.median(later)
out["host_traces"] = first["total"]
plugin.catalog().stop()
print(json.dumps(out))
"""


def _records(path: str) -> list[int]:
    """The offset of every record of a TFRecord file, and its end."""
    offsets, pos = [0], 0
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        while pos < size:
            f.seek(pos)
            length = int.from_bytes(f.read(8), "little")
            pos += 12 + length + 4
            offsets.append(pos)
    return offsets


def split_hosts(dump: str, out: str, hosts: int) -> None:
    names = [n for n in os.listdir(dump) if n.startswith("tfdbg_events.")]
    traces = next(n for n in names if n.endswith(".graph_execution_traces"))
    epoch = traces.split(".")[1]
    offsets = _records(os.path.join(dump, traces))
    n = len(offsets) - 1
    os.makedirs(out)
    with open(os.path.join(dump, traces), "rb") as f:
        for k in range(hosts):
            lo, hi = offsets[n * k // hosts], offsets[n * (k + 1) // hosts]
            for name in names:
                suffix = name.rsplit(".", 1)[1]
                target = os.path.join(out, f"tfdbg_events.{epoch}.worker-{k}.{suffix}")
                if name == traces:
                    f.seek(lo)
                    with open(target, "wb") as w:
                        w.write(f.read(hi - lo))
                else:
                    shutil.copy(os.path.join(dump, name), target)


def measure(logdir: str) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURE, logdir, os.path.join(ROOT, "tests")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", default=None, help="a dump directory (default: bench/generate.py's 1 M-trace dump)")
    ap.add_argument("--hosts", type=int, default=8)
    args = ap.parse_args(argv)
    if args.dump is None:
        sys.path.insert(0, os.path.join(ROOT, "bench"))
        import generate

        args.dump = generate.ensure(1_000_000)
    tmp = tempfile.mkdtemp(prefix="dbg-hosts-")
    try:
        split_hosts(args.dump, os.path.join(tmp, "multi", "run"), args.hosts)
        single = measure(os.path.dirname(os.path.abspath(args.dump)))
        multi = measure(os.path.join(tmp, "multi"))
    finally:
        shutil.rmtree(tmp)
    print(json.dumps({"single": single, "multi": multi}, indent=2))
    for label, m in (("1 host", single), (f"{args.hosts} hosts", multi)):
        print(
            f"{label}: {m['traces']:,} traces indexed in {m['index_s']:.2f} s "
            f"({m['index_s'] / m['traces'] * 1e6:.2f} µs/trace), peak RSS {m['peak_rss'] / 2**20:.0f} MiB; "
            f"host filter ({m['host_traces']:,} rows): first {m['host_filter_first_ms']:.1f} ms, "
            f"then {m['host_filter_median_ms']:.1f} ms median"
        )


if __name__ == "__main__":
    main()

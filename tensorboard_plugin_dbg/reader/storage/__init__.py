"""The one file-system layer under the reader: a logdir is a local path or a URL (gs://, s3://, any fsspec scheme).

Local paths take the same calls as before this layer existed (`open`, `os.pread`, `os.stat`): `is_remote` is one
substring test, so the hot path pays nothing. Every other URL goes through `remote.RemoteStore` (one per scheme):
one recursive listing per refresh (`list_files`), sizes from that listing, ranged reads in large blocks, and the
session's cost (`cost`). Errors are OSErrors: FileNotFoundError for a missing object, PermissionError for denied
credentials, backends.RemoteError for an unreachable endpoint or a timeout.
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
from collections.abc import Callable, Iterator
from typing import BinaryIO, cast

from ...wire.types import RemoteCost
from .backends import REQUEST_TIMEOUT_S, RemoteError
from .listing import unsafe_key
from .remote import COST, RANDOM_BLOCK, STREAM_BLOCK, RemoteFile, RemoteStore

__all__ = ["REQUEST_TIMEOUT_S", "RANDOM_BLOCK", "STREAM_BLOCK", "RemoteError", "is_remote", "unsafe_key"]

# one store per scheme and endpoint settings: a process whose endpoint changes (another server) gets a new store,
# never the old endpoint's file system and cached listings
_ENDPOINT_VARIABLES = (
    "AWS_ENDPOINT_URL_S3",
    "AWS_ENDPOINT_URL",
    "S3_ENDPOINT",
    "S3_USE_HTTPS",
    "STORAGE_EMULATOR_HOST",
)
_stores: dict[tuple[str, tuple[str | None, ...]], RemoteStore] = {}
_stores_lock = threading.Lock()


def is_remote(path: str) -> bool:
    """A URL other than file:// (a local path never holds '://')."""
    return "://" in path and not path.startswith("file://")


def _store(url: str) -> RemoteStore:
    protocol = url.split("://", 1)[0]
    key = (protocol, tuple(os.environ.get(name) for name in _ENDPOINT_VARIABLES))
    with _stores_lock:
        store = _stores.get(key)
        if store is None:
            store = _stores[key] = RemoteStore(protocol)
        return store


def normalize(logdir: str) -> str:
    """The logdir as the reader names it: a local path unchanged, a URL in its canonical form (no trailing '/')."""
    if logdir.startswith("file://"):
        return logdir[len("file://") :]
    return _store(logdir).url(logdir) if is_remote(logdir) else logdir


def open_read(path: str, block: int = RANDOM_BLOCK) -> BinaryIO:
    """A binary file open for reading: local as `open(path, "rb")`, remote a RemoteFile fetching `block` bytes a
    time (STREAM_BLOCK for sequential reads)."""
    if not is_remote(path):
        return open(path, "rb")
    store = _store(path)
    return cast(BinaryIO, RemoteFile(store, store.url(path), block))


def open_unbuffered(path: str, block: int = STREAM_BLOCK) -> io.RawIOBase:
    """As open_read, unbuffered (readinto straight into the caller's buffer: big_record.py, tensor ranges)."""
    if not is_remote(path):
        return open(path, "rb", buffering=0)
    store = _store(path)
    return RemoteFile(store, store.url(path), block)


@contextlib.contextmanager
def preader(path: str) -> Iterator[Callable[[int, int], bytes]]:
    """A `read(n, offset) -> bytes` over one file, for many positioned reads (os.pread locally)."""
    if not is_remote(path):
        fd = os.open(path, os.O_RDONLY)
        try:
            yield lambda n, offset: os.pread(fd, n, offset)
        finally:
            os.close(fd)
        return
    store = _store(path)
    with RemoteFile(store, store.url(path), RANDOM_BLOCK) as f:
        yield f.pread


def size_of(f: BinaryIO) -> int:
    """The size of an open file (local: fstat; remote: its listed size)."""
    return f.size if isinstance(f, RemoteFile) else os.fstat(f.fileno()).st_size


def remote_size(url: str) -> int:
    """A remote object's size, from the latest listing when it covered the object (no request then)."""
    store = _store(url)
    return store.size(store.url(url))


def listed_version(url: str) -> tuple[int, str] | None:
    """A remote object's (size, ETag or generation) in the latest listing covering it (no request); None if unlisted."""
    store = _store(url)
    return store.version(store.url(url))


def list_files(logdir: str) -> dict[str, int]:
    """Every object under a remote logdir (URL -> size), by one recursive listing; keys with an empty, '.' or '..'
    segment are left out (refused_keys names them): no reader ever joins one into a path."""
    return _store(logdir).list_files(logdir)


def refused_keys(logdir: str) -> list[str]:
    """The URLs list_files(logdir) last left out as unsafe (an empty, '.' or '..' segment)."""
    return _store(logdir).refused(logdir)


def refused_notice(logdir: str) -> str | None:
    """refused_keys(logdir) in words (the first few named), or None when there were none."""
    refused = refused_keys(logdir)
    if not refused:
        return None
    root = normalize(logdir)
    named = ", ".join(repr(relpath(url, root)) for url in refused[:5]) + (", …" if len(refused) > 5 else "")
    return (
        f"{len(refused)} object key(s) under {root} refused and never read or copied: an empty, '.' or '..' segment "
        f"could name a path outside its folder ({named})."
    )


# The path helpers of the reader, for paths and URLs alike (URLs always use '/').
def join(directory: str, name: str) -> str:
    return f"{directory.rstrip('/')}/{name}" if is_remote(directory) else os.path.join(directory, name)


def basename(path: str) -> str:
    return path.rsplit("/", 1)[-1] if is_remote(path) else os.path.basename(path)


def relpath(path: str, root: str) -> str:
    """`path` relative to `root` ('.' for root itself), '/'-separated."""
    if not is_remote(root):
        return os.path.relpath(path, root).replace(os.sep, "/")
    root = root.rstrip("/")
    return "." if path.rstrip("/") == root else path[len(root) + 1 :] if path.startswith(root + "/") else path


def cost() -> RemoteCost | None:
    """What remote reading cost this process so far; None when it read nothing remote."""
    if not _stores:
        return None
    lists, gets, heads, nbytes = COST.snapshot()
    return {"lists": lists, "gets": gets, "heads": heads, "bytes": nbytes}


def forget() -> None:
    """Drops every remote store (its file system, listings and fetched ranges): the next read starts cold. For
    benchmarks and tests that compare a cold read with another."""
    with _stores_lock:
        _stores.clear()

"""Reading objects of a remote logdir: one recursive listing per refresh, ranged reads from known offsets.

- Sizes come from the last listing that covered an object (a refresh lists the logdir once): an idle refresh of a
  finished run asks nothing more, since its files' offsets already equal their sizes.
- A read fetches [offset, offset + block) — `STREAM_BLOCK` (8 MiB) for the indexer's sequential reads, `RANDOM_BLOCK`
  for reading records back and tensor values — and keeps what came back in a small LRU (`BUFFER_CAP` bytes, in
  memory: nothing is ever written into the logdir). A growing object is read from the offset reading stopped at: a
  buffer that ended at the old end still answers what it holds, the rest is fetched from there on. While the indexer
  decodes one block, the next is fetched on a background thread (one per scheme), so transfer and decoding overlap.
  `DBG_REMOTE_BLOCK_MIB` sets the indexer's block (default 8, at least 8).
- An object that shrank or was replaced (its size or version changed) loses its buffers.
"""

from __future__ import annotations

import io
import os
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from . import backends, listing
from .range_stream import RangeStream

STREAM_BLOCK = max(8, int(os.environ.get("DBG_REMOTE_BLOCK_MIB", "8"))) << 20  # the indexer's ranged reads
RANDOM_BLOCK = 256 << 10
BUFFER_CAP = max(32 << 20, 4 * STREAM_BLOCK)  # bytes of fetched ranges kept, all objects together (a block read,
# the next one fetched meanwhile, the random reads')


class Cost:
    """What remote reading cost this process (the status bar's figure; thread-safe counters)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lists = self.gets = self.heads = self.bytes = 0

    def add(self, lists: int = 0, gets: int = 0, heads: int = 0, nbytes: int = 0) -> None:
        with self.lock:
            self.lists += lists
            self.gets += gets
            self.heads += heads
            self.bytes += nbytes

    def snapshot(self) -> tuple[int, int, int, int]:
        with self.lock:
            return self.lists, self.gets, self.heads, self.bytes


COST = Cost()


class RemoteStore:
    """One fsspec file system (one URL scheme) and what is known of its objects."""

    def __init__(self, protocol: str):
        self.protocol = protocol
        self.fs = backends.make_fs(protocol)
        self._lock = threading.Lock()
        self._sizes: dict[str, tuple[int, str]] = {}  # url -> (size, version) from the last listing covering it
        self._listed: set[str] = set()  # roots whose listing is current
        self._refused: dict[str, list[str]] = {}  # root -> the unsafe keys its last listing held (listing.unsafe_key)
        self._buffers: OrderedDict[tuple[str, int], bytes] = OrderedDict()  # (url, start) -> bytes, LRU
        self._buffered = 0
        self._pending: dict[tuple[str, int], tuple[int, Future[None]]] = {}  # (url, start) -> (end, fetch in flight)
        self._streams: dict[str, RangeStream] = {}  # url -> its open sequential stream (S3)
        self._stream_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=f"dbg-prefetch-{protocol}")

    # --------------------------------------------------------------------------------------------- naming
    def url(self, path: str) -> str:
        """The canonical URL of `path` (what listings return, so names compare as strings)."""
        return str(self.fs.unstrip_protocol(self.fs._strip_protocol(path))).rstrip("/")

    def _call(self, what: str, url: str, name: str, *args: Any, **kwargs: Any) -> Any:
        """fs.`name`(*args) bounded by backends.REQUEST_TIMEOUT_S; errors as backends.describe says. Two names are
        listing.py's: "pages" (args[0], a coroutine function run on the file system's loop with the file system
        first, bounded page by page) and "find_listing" (listing.list_find)."""
        try:
            if name == "find_listing":
                return listing.list_find(self.fs, args[0], self.url)
            if getattr(self.fs, "async_impl", False):
                from fsspec.asyn import sync

                if name == "pages":  # bounded page by page (listing.py)
                    return sync(self.fs.loop, args[0], self.fs, *args[1:], **kwargs)
                coro_fn = getattr(self.fs, "_" + name)
                return sync(self.fs.loop, coro_fn, *args, timeout=backends.REQUEST_TIMEOUT_S, **kwargs)
            return getattr(self.fs, name)(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - every backend raises its own kinds
            raise backends.describe(exc, what, url) from exc

    # --------------------------------------------------------------------------------------------- listing
    def list_files(self, root: str) -> dict[str, int]:
        """Every object under `root` (a URL) -> its size: one recursive listing, paged by the service (listing.py)."""
        root = self.url(root)
        listed, pages = self._list(root)
        COST.add(lists=pages)
        sizes, refused = listing.split_refused(listed, root)
        with self._lock:
            under = root + "/"
            for url, (old_size, old_version) in list(self._sizes.items()):
                if not url.startswith(under):
                    continue
                new = sizes.get(url)
                if new is None:  # deleted
                    del self._sizes[url]
                    self._drop_buffers(url)
                elif new[0] < old_size or (new[0] == old_size and new[1] != old_version):
                    self._drop_buffers(url)  # shrank or replaced: what was fetched may be stale (a grown object's
                    # first bytes are those read before: dump files are only appended to)
            self._sizes.update(sizes)
            self._listed.add(root)
            self._refused[root] = refused
        return {url: size for url, (size, _) in sizes.items()}

    def refused(self, root: str) -> list[str]:
        """The URLs of the unsafe keys the last listing of `root` held and list_files left out."""
        with self._lock:
            return list(self._refused.get(self.url(root), ()))

    def version(self, url: str) -> tuple[int, str] | None:
        """(size, ETag or generation) of the object in the last listing covering it; None when none held it."""
        with self._lock:
            return self._sizes.get(url)

    def _list(self, root: str) -> tuple[listing.Listing, int]:
        if self.protocol not in ("s3", "s3a", "gs", "gcs"):
            return self._call("listing", root, "find_listing", root)
        bucket, _, key = self.fs._strip_protocol(root).partition("/")
        prefix = key.rstrip("/") + "/" if key else ""
        list_pages = listing.list_s3 if self.protocol in ("s3", "s3a") else listing.list_gcs
        base = self.url(f"{self.protocol}://{bucket}")  # URLs as url() writes them (s3a:// and gcs:// too)
        args = (bucket, prefix, base, backends.REQUEST_TIMEOUT_S)  # the timeout bounds each page
        return self._call("listing", root, "pages", list_pages, *args)

    def size(self, url: str) -> int:
        """The object's size: from the last listing covering it, else asked (one HEAD). FileNotFoundError when
        a current listing of its folder does not hold it."""
        with self._lock:
            known = self._sizes.get(url)
            listed = any(url.startswith(root + "/") for root in self._listed)
        if known is not None:
            return known[0]
        if listed:
            raise FileNotFoundError(2, f"{url} is not in the latest listing (deleted?)", url)
        info = self._call("asking the size of", url, "info", self.fs._strip_protocol(url))
        COST.add(heads=1)
        return int(info.get("size") or 0)

    # --------------------------------------------------------------------------------------------- reading
    def read(self, url: str, start: int, n: int, block: int) -> bytes:
        """Bytes [start, start + n) of the object (fewer at its end), fetched `block` bytes at a time. A sequential
        reader's next block (block >= STREAM_BLOCK) is fetched in the background while it decodes this one; a read
        across the end of a fetched range takes the rest from the next (awaited when in flight)."""
        size = self.size(url)
        end = min(start + n, size)
        pieces: list[bytes] = []
        pos = start
        while pos < end:
            held = self._buffered_range(url, pos, end) or self._awaited(url, pos, end)
            if held is None:
                fetch_end = min(size, max(end, pos + block))
                data = (
                    self._fetch_block(url, pos, fetch_end)
                    if block >= STREAM_BLOCK
                    else self._fetch(url, pos, fetch_end)
                )
                if not data:  # the object is shorter than listed: truncated or replaced meanwhile
                    with self._lock:
                        self._sizes.pop(url, None)
                        self._drop_buffers(url)
                    break
                self._keep(url, pos, data)
                held = (data[: end - pos], pos + len(data))
            pieces.append(held[0])
            pos += len(held[0])
            if block >= STREAM_BLOCK and held[1] < size:
                self._prefetch(url, held[1], min(size, held[1] + block))
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    def _fetch_block(self, url: str, start: int, end: int) -> bytes:
        """A sequential reader's block: from the object's open stream when it stands at `start` (or a new one,
        S3 only: range_stream.py), else a ranged read."""
        if self.protocol not in ("s3", "s3a"):
            return self._fetch(url, start, end)
        with self._stream_lock:
            stream = self._streams.get(url)
            if stream is None or stream.pos != start:
                if stream is not None:
                    stream.close()
                stream = self._streams[url] = RangeStream(self.fs, url, start, self.size(url))
                COST.add(gets=1)
            data = stream.read(end - start)
            COST.add(nbytes=len(data))
            if stream.done:
                self._streams.pop(url, None)
        return data

    def _fetch(self, url: str, start: int, end: int) -> bytes:
        data = self._call("reading", url, "cat_file", self.fs._strip_protocol(url), start=start, end=end)
        COST.add(gets=1, nbytes=len(data))
        return bytes(data)

    def _buffered_range(self, url: str, start: int, end: int) -> tuple[bytes, int] | None:
        """(bytes [start, min(end, where the buffer ends)), where the buffer ends) from a fetched range holding
        `start`; None when none does."""
        with self._lock:
            for (b_url, b_start), data in reversed(self._buffers.items()):
                if b_url == url and b_start <= start < b_start + len(data):
                    self._buffers.move_to_end((b_url, b_start))
                    return data[start - b_start : end - b_start], b_start + len(data)
        return None

    def _awaited(self, url: str, start: int, end: int) -> tuple[bytes, int] | None:
        """The range from a background fetch in flight that covers `start` (None when none does, or it failed:
        the caller then fetches, and reports the failure itself)."""
        with self._lock:
            pending = [
                f for (p_url, p_start), (p_end, f) in self._pending.items() if p_url == url and p_start <= start < p_end
            ]
        for future in pending:
            try:
                future.result(timeout=backends.REQUEST_TIMEOUT_S + 5)
            except Exception:  # noqa: BLE001 - the synchronous fetch after this raises it in words
                pass
        return self._buffered_range(url, start, end) if pending else None

    def _prefetch(self, url: str, start: int, end: int) -> None:
        """Fetches [start, end) in the background unless it is held or in flight already."""
        with self._lock:
            if (url, start) in self._pending or (url, start) in self._buffers:
                return
            future = self._pool.submit(self._prefetched, url, start, end)
            self._pending[(url, start)] = (end, future)

    def _prefetched(self, url: str, start: int, end: int) -> None:
        try:
            data = self._fetch_block(url, start, end)
            if len(data) == end - start:
                self._keep(url, start, data)
        finally:
            with self._lock:
                self._pending.pop((url, start), None)

    def _keep(self, url: str, start: int, data: bytes) -> None:
        if len(data) > BUFFER_CAP // 2:
            return
        with self._lock:
            old = self._buffers.pop((url, start), None)
            self._buffered -= len(old) if old is not None else 0
            self._buffers[(url, start)] = data
            self._buffered += len(data)
            while self._buffered > BUFFER_CAP and self._buffers:
                _, dropped = self._buffers.popitem(last=False)
                self._buffered -= len(dropped)

    def _drop_buffers(self, url: str) -> None:  # under self._lock
        for key in [k for k in self._buffers if k[0] == url]:
            self._buffered -= len(self._buffers.pop(key))


class RemoteFile(io.RawIOBase):
    """A read-only, seekable file over one object (read/readinto/seek/tell, as the reader uses a local file)."""

    def __init__(self, store: RemoteStore, url: str, block: int):
        super().__init__()
        self.store, self.url, self.block = store, url, block
        self.size = store.size(url)  # raises FileNotFoundError when it is gone
        self.pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def tell(self) -> int:
        return self.pos

    def readinto(self, buffer: Any) -> int:  # buffer: any writable buffer (bytearray, memoryview, numpy data)
        view = memoryview(buffer).cast("B")
        data = self.store.read(self.url, self.pos, len(view), self.block)
        view[: len(data)] = data
        self.pos += len(data)
        return len(data)

    def pread(self, n: int, offset: int) -> bytes:
        return self.store.read(self.url, offset, n, self.block)

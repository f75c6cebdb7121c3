"""One open-ended ranged GET of an S3 object, read a block at a time: the indexer's sequential reads of a big object.

A server answers a ranged GET with work that can grow with the object (moto, the loopback S3 of the tests and
benchmarks, reads the whole object for each range), and every request pays a round trip: one GET from the known
offset to the object's listed end, consumed in the indexer's blocks as it decodes, costs one request where 8 MiB
ranges cost one per block. Memory stays a block: the HTTP client stops reading the socket while its buffer is full.
Other schemes (and reads that are not the stream's next bytes) use ranged reads (remote.RemoteStore._fetch).
"""

from __future__ import annotations

from typing import Any

from . import backends


class RangeStream:
    """The bytes [start, end) of one S3 object as one streamed response."""

    def __init__(self, fs: Any, url: str, start: int, end: int):  # fs: an s3fs.S3FileSystem
        from fsspec.asyn import sync

        self._sync, self.fs, self.url = sync, fs, url
        self.pos, self.end = start, end
        bucket, key, _version = fs.split_path(url)
        try:
            response = sync(
                fs.loop,
                fs._call_s3,
                "get_object",
                Bucket=bucket,
                Key=key,
                Range=f"bytes={start}-{end - 1}",
                timeout=backends.REQUEST_TIMEOUT_S,
            )
        except Exception as exc:  # noqa: BLE001 - s3fs and botocore raise their own kinds
            raise backends.describe(exc, "reading", url) from exc
        self.body = response["Body"]

    @property
    def done(self) -> bool:
        return self.pos >= self.end

    def read(self, n: int) -> bytes:
        """The next n bytes (fewer only at the stream's end, or when the object is shorter than listed)."""

        async def next_bytes() -> bytes:
            parts, left = [], n
            while left > 0:
                chunk = await self.body.read(min(left, 1 << 20))
                if not chunk:
                    break
                parts.append(chunk)
                left -= len(chunk)
            return b"".join(parts)

        try:
            data: bytes = self._sync(self.fs.loop, next_bytes, timeout=backends.REQUEST_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001
            self.close()
            raise backends.describe(exc, "reading", self.url) from exc
        self.pos += len(data)
        if len(data) < n:
            self.pos = self.end  # cut short: the object changed; the caller falls back to ranged reads
        if self.done:
            self.close()
        return data

    def close(self) -> None:
        try:
            self.body.close()
        except Exception:  # noqa: BLE001 - closing a finished or broken stream
            pass
        self.pos = self.end

"""The fsspec file system behind a remote logdir's scheme, with bounded waits, and its errors in words.

- s3:// (s3fs): the endpoint from `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL` (botocore reads them too), else
  TensorBoard's `S3_ENDPOINT` (with `S3_USE_HTTPS=0` for plain http); credentials botocore's usual ways.
- gs:// (gcsfs): its core class, never the experimental one whose bucket-type lookup speaks gRPC (an emulator does not
  answer it: a 60 s wait); `STORAGE_EMULATOR_HOST` makes it an emulator's, read anonymously.
- anything else fsspec knows (memory://, az://, hdfs://, ...), as fsspec makes it.

Every call is bounded: `DBG_REMOTE_TIMEOUT` seconds (default 30) for one call, its retries included.
"""

from __future__ import annotations

import asyncio
import errno
import os
from typing import Any

REQUEST_TIMEOUT_S = float(os.environ.get("DBG_REMOTE_TIMEOUT", "30"))
CONNECT_TIMEOUT_S = 5.0  # one connection attempt (s3fs/botocore)


class RemoteError(OSError):
    """A remote call failed: `errno` says the kind (ETIMEDOUT, ECONNREFUSED, EACCES, ENOENT, EIO), the message
    what and where, in words a user can act on."""


def make_fs(protocol: str) -> Any:  # an fsspec AbstractFileSystem (fsspec ships no types)
    if protocol in ("s3", "s3a"):
        return _s3()
    if protocol in ("gs", "gcs"):
        return _gcs()
    import fsspec

    return fsspec.filesystem(protocol)


def _s3_endpoint() -> str | None:
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        return endpoint
    tb_endpoint = os.environ.get("S3_ENDPOINT")  # TensorBoard's (and TensorFlow's) name: host[:port] or a URL
    if not tb_endpoint:
        return None
    if "://" in tb_endpoint:
        return tb_endpoint
    scheme = "http" if os.environ.get("S3_USE_HTTPS", "1") == "0" else "https"
    return f"{scheme}://{tb_endpoint}"


def _s3() -> Any:
    try:
        import s3fs
    except ImportError as exc:
        raise RemoteError(errno.ENOSYS, 's3:// needs s3fs: pip install "tensorboard-plugin-dbg[s3]"') from exc
    endpoint = _s3_endpoint()
    fs = s3fs.S3FileSystem(
        client_kwargs={"endpoint_url": endpoint} if endpoint else {},
        config_kwargs={
            "connect_timeout": CONNECT_TIMEOUT_S,
            "read_timeout": REQUEST_TIMEOUT_S,
            "retries": {"max_attempts": 2, "mode": "standard"},
        },
        use_listings_cache=False,  # every refresh lists afresh: a listing cache would hide new objects
        skip_instance_cache=True,
    )
    fs.retries = 2  # s3fs's own retries of a failed call (5 by default), on top of botocore's
    return fs


def _gcs() -> Any:
    try:
        from gcsfs.core import GCSFileSystem  # the core class: no gRPC bucket-type lookup (see the module doc)
    except ImportError as exc:
        raise RemoteError(errno.ENOSYS, 'gs:// needs gcsfs: pip install "tensorboard-plugin-dbg[gcs]"') from exc
    emulator = os.environ.get("STORAGE_EMULATOR_HOST", "") not in ("", "default")
    return GCSFileSystem(
        token="anon" if emulator else None,
        use_listings_cache=False,
        skip_instance_cache=True,
    )


def describe(exc: BaseException, what: str, url: str) -> OSError:
    """`exc`, raised while doing `what` on `url`, as the OSError the reader reports: FileNotFoundError and
    PermissionError kept (a missing object is a missing file), the rest a RemoteError in words."""
    if isinstance(exc, RemoteError):
        return exc
    name = type(exc).__name__
    text = str(exc) or name
    if isinstance(exc, FileNotFoundError):
        return FileNotFoundError(errno.ENOENT, f"{url} not found (no such bucket or object): {text}", url)
    if isinstance(exc, PermissionError) or "AccessDenied" in text or "InvalidAccessKeyId" in text or " 403" in text:
        return PermissionError(errno.EACCES, f"access to {url} denied (check the credentials): {text}", url)
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) or "Timeout" in name:
        return RemoteError(errno.ETIMEDOUT, f"{what} {url}: no answer within {REQUEST_TIMEOUT_S:g} s", url)
    if "Connect" in name or "Connection" in text or isinstance(exc, ConnectionError):
        return RemoteError(errno.ECONNREFUSED, f"{what} {url}: cannot reach the storage endpoint ({text})", url)
    return RemoteError(errno.EIO, f"{what} {url} failed: {name}: {text}", url)

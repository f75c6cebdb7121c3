"""One recursive listing of a remote logdir, page by page, parsed cheaply: URL -> (size, version), and the pages asked.

s3:// and gs:// call the service's list API themselves (ListObjectsV2, 1,000 keys a page; GCS objects.list, 5,000 a
page, only the fields used) through the backend's own client, so a refresh pays the requests and nothing more: no
directory entries synthesized for every key, no info dict per object, no HEAD when the prefix is empty, and the
listing calls counted as made (not estimated). Each page is bounded by `timeout` seconds (a big bucket's listing
takes as many pages as it needs, none of them may hang). Any other scheme lists through fsspec's `find`.
"""

from __future__ import annotations

import asyncio
from typing import Any

Listing = dict[str, tuple[int, str]]  # url -> (size, version: ETag, generation or mtime)
_UNSAFE_SEGMENTS = ("", ".", "..")
S3_PAGE = 1000  # the most ListObjectsV2 answers in one page
GCS_PAGE = 5000  # the most objects.list answers in one page
_GCS_FIELDS = "items(name,size,generation),nextPageToken"  # what a page carries (the service drops the rest)


async def list_s3(fs: Any, bucket: str, prefix: str, base: str, timeout: float) -> tuple[Listing, int]:
    """Every object of `bucket` under `prefix` (an s3fs.S3FileSystem's client): the listing (URLs `base`/KEY, `base`
    the bucket's canonical URL) and the pages asked."""
    found: Listing = {}
    pages = 0
    # req_kw: the requester-pays setting, passed as s3fs's own listing passes it (botocore's keyword arguments)
    kwargs: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": S3_PAGE, **getattr(fs, "req_kw", {})}
    while True:
        page = await asyncio.wait_for(fs._call_s3("list_objects_v2", **kwargs), timeout)
        pages += 1
        for item in page.get("Contents", ()):
            found[f"{base}/{item['Key']}"] = (int(item.get("Size", 0)), str(item.get("ETag", "")))
        token = page.get("NextContinuationToken")
        if not page.get("IsTruncated") or not token:
            return found, pages
        kwargs["ContinuationToken"] = token


async def list_gcs(fs: Any, bucket: str, prefix: str, base: str, timeout: float) -> tuple[Listing, int]:
    """Every object of `bucket` under `prefix` (a gcsfs.GCSFileSystem's session): the listing and the pages asked."""
    found: Listing = {}
    pages = 0
    token = None
    while True:
        call = fs._call(
            "GET",
            "b/{}/o",
            bucket,
            json_out=True,
            prefix=prefix or None,
            maxResults=GCS_PAGE,
            pageToken=token,
            fields=_GCS_FIELDS,
        )
        page = await asyncio.wait_for(call, timeout)
        pages += 1
        for item in page.get("items", ()):
            found[f"{base}/{item['name']}"] = (int(item.get("size", 0)), str(item.get("generation", "")))
        token = page.get("nextPageToken")
        if not token:
            return found, pages


def list_find(fs: Any, root: str, url_of: Any) -> tuple[Listing, int]:
    """Any other fsspec scheme: `find` (memory://, az://, hdfs://, ...); one call counted."""
    found: Listing = {}
    for name, info in fs.find(fs._strip_protocol(root), detail=True).items():
        if info.get("type", "file") == "directory":
            continue
        version = str(info.get("ETag") or info.get("generation") or info.get("etag") or info.get("mtime") or "")
        found[url_of(name)] = (int(info.get("size") or 0), version)
    return found, 1


def unsafe_key(rel: str) -> bool:
    """A key (relative to the listed root) that no reader may use: an empty, '.' or '..' segment could name a path
    outside its folder once joined into a local path (object stores keep such keys verbatim), a NUL none at all."""
    return "\0" in rel or any(segment in _UNSAFE_SEGMENTS for segment in rel.split("/"))


def split_refused(found: Listing, root: str) -> tuple[Listing, list[str]]:
    """The listing of `root` without its unsafe keys, and those keys' URLs (sorted). A zero-byte key ending in '/' is a
    folder marker (what consoles write for "create folder"): no file, dropped quietly."""
    kept: Listing = {}
    refused = []
    under = root.rstrip("/") + "/"
    for url, entry in found.items():
        rel = url[len(under) :] if url.startswith(under) else url
        if rel.endswith("/") and entry[0] == 0:
            continue
        if unsafe_key(rel):
            refused.append(url)
        else:
            kept[url] = entry
    return kept, sorted(refused)

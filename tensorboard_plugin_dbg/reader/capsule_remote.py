"""NaN capsules behind a URL (gs://, s3://, memory://, any fsspec scheme the storage layer reads): each capsule's own
files are copied into a local folder, where capsule_files reads them as usual (np.load wants a seekable local file,
and a capsule is read whole anyway). Replay dumps under a capsule are not copied: `report` reads those as runs,
through the storage layer, like any other run."""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import tempfile
from collections.abc import Iterator

from tensorboard_plugin_dbg.reader import storage

MANIFEST = "manifest.json"


def capsule_files_under(url: str, listed: dict[str, int] | None = None) -> dict[str, list[str]]:
    """Capsule folder URL -> the URLs of its own files (not its subfolders: the replay dump stays remote). `listed`:
    storage.list_files(url) when the caller has it (one listing, not two)."""
    listed = storage.list_files(url) if listed is None else listed
    folders = {posixpath.dirname(u) for u in listed if posixpath.basename(u) == MANIFEST}
    found: dict[str, list[str]] = {folder: [] for folder in folders}
    for file_url in listed:
        folder = posixpath.dirname(file_url)
        if folder in found:
            found[folder].append(file_url)
    return found


@contextlib.contextmanager
def local_copy(url: str, keep: bool = False) -> Iterator[str]:
    """A local folder standing for URL: its capsules copied at the same relative paths (URL itself may be a capsule).
    Removed on exit unless `keep` (replay runs the program there and leaves its dump there)."""
    url = storage.normalize(url)
    root = tempfile.mkdtemp(prefix="tbdbg-capsule-")
    local = os.path.join(root, posixpath.basename(url.rstrip("/")) or "capsules")
    os.makedirs(local)
    try:
        for files in capsule_files_under(url).values():
            for file_url in files:
                target = inside(local, storage.relpath(file_url, url))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with storage.open_read(file_url, storage.STREAM_BLOCK) as source, open(target, "wb") as sink:
                    shutil.copyfileobj(source, sink, 1 << 20)
        yield local
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def inside(root: str, rel: str) -> str:
    """The local path of `rel` ('/'-separated, from a listing) under `root`; PermissionError when it would lie
    anywhere else (storage.list_files already refuses such keys: this is the check at the point of writing)."""
    if storage.unsafe_key(rel):
        raise PermissionError(f"refused to copy {rel!r}: an empty, '.' or '..' segment")
    real_root = os.path.realpath(root)
    target = os.path.realpath(os.path.join(root, *rel.split("/")))
    if os.path.commonpath([real_root, target]) != real_root:
        raise PermissionError(f"refused to copy {rel!r}: it would lie outside {root}")
    return target


def as_url(local_path: str, local: str, url: str) -> str:
    """The URL of a path inside local_copy(url)'s folder `local`."""
    rel = os.path.relpath(local_path, local).replace(os.sep, "/")
    return url.rstrip("/") if rel == "." else storage.join(url, rel)

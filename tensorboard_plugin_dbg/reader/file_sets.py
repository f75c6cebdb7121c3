"""Finding tfdbg2 file sets under a logdir and grouping them into runs.

A file set is the six files one writer wrote: tfdbg_events.<epoch>.<host>.<suffix>. Every directory (recursively)
holding file sets yields runs: file sets sharing a tfdbg_run_id are one (multi-host) run; different run ids in one
directory are separate runs named '<dir>#<first 8 chars of the run id>'.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat

import numpy as np

from . import schema, storage, tfrecord

SUFFIXES = ("metadata", "source_files", "stack_frames", "graphs", "execution", "graph_execution_traces")
_NAME = re.compile(r"^tfdbg_events\.(\d+)\.(.+)\.(" + "|".join(SUFFIXES) + r")$")


@dataclasses.dataclass
class FileSet:
    directory: str  # absolute
    prefix: str  # 'tfdbg_events.<epoch>.<host>'
    epoch: int
    host: str
    run_id: str | None = None  # from the metadata file, once readable

    def path(self, suffix: str) -> str:
        return storage.join(self.directory, f"{self.prefix}.{suffix}")


def find_file_sets(logdir: str, errors: list[tuple[str, OSError]] | None = None) -> list[FileSet]:
    """Every file set under logdir (a set counts as soon as any of its files exists), sorted by directory, time.

    Symlinked folders and files are followed: a run folder is often a link to a dump kept elsewhere. Every folder is
    walked once by its real path, and the link-free folders first, so a link loop ends, and a dump reachable both
    directly and through links (or through two links) is listed once, under its most direct path. A folder that cannot
    be listed is appended to `errors` (when given) instead of hiding the rest of the logdir. A remote logdir (a URL)
    is listed once, recursively (find_remote_file_sets)."""
    if storage.is_remote(logdir):
        return find_remote_file_sets(logdir, errors)
    root = os.path.abspath(logdir)
    walked: set[str] = set()  # real paths of the folders walked
    links: list[str] = []  # symlinked folders, followed once every link-free folder is walked
    entries: list[tuple[tuple[str, str], str, bool]] = []  # ((directory, prefix), real path of the file, via link)
    found: dict[tuple[str, str], FileSet] = {}

    def walk(top: str, real_top: str) -> None:
        stack = [(top, real_top)]
        while stack:
            directory, real = stack.pop()
            if real in walked:
                continue
            walked.add(real)
            try:
                with os.scandir(directory) as it:
                    listing = sorted(it, key=lambda e: e.name)
            except OSError as exc:
                if errors is not None:
                    errors.append((directory, exc))
                continue
            subdirs = []
            for entry in listing:
                try:
                    is_link = entry.is_symlink()
                    is_dir = entry.is_dir()  # follows a link; False for a dangling one
                except OSError:
                    continue
                if is_dir and is_link:
                    links.append(entry.path)
                    continue
                if is_dir:
                    subdirs.append((entry.path, os.path.join(real, entry.name)))
                    continue
                m = _NAME.match(entry.name)
                if m:
                    key = (directory, entry.name[: -len(m.group(3)) - 1])
                    if key not in found:
                        found[key] = FileSet(directory, key[1], int(m.group(1)), m.group(2))
                    file_real = os.path.realpath(entry.path) if is_link else os.path.join(real, entry.name)
                    entries.append((key, file_real, is_link))
            stack.extend(reversed(subdirs))

    walk(root, os.path.realpath(root))
    i = 0
    while i < len(links):  # links found inside followed links are appended and followed in turn
        walk(links[i], os.path.realpath(links[i]))
        i += 1
    return sorted(_drop_duplicates(found, entries), key=lambda s: (s.directory, s.epoch, s.prefix))


def find_remote_file_sets(logdir: str, errors: list[tuple[str, OSError]] | None = None) -> list[FileSet]:
    """Every file set under a remote logdir, from one recursive listing (dump files at any depth); a listing that
    fails (unreachable endpoint, denied credentials, no such bucket) is appended to `errors`."""
    try:
        listed = storage.list_files(logdir)
    except OSError as exc:
        if errors is None:
            raise
        errors.append((logdir, exc))
        return []
    found: dict[tuple[str, str], FileSet] = {}
    for url in listed:
        directory, _, name = url.rpartition("/")
        m = _NAME.match(name)
        if m and (directory, name[: -len(m.group(3)) - 1]) not in found:
            key = (directory, name[: -len(m.group(3)) - 1])
            found[key] = FileSet(directory, key[1], int(m.group(1)), m.group(2))
    return sorted(found.values(), key=lambda s: (s.directory, s.epoch, s.prefix))


def _drop_duplicates(
    found: dict[tuple[str, str], FileSet], entries: list[tuple[tuple[str, str], str, bool]]
) -> list[FileSet]:
    """The file sets minus those whose every file is a file of one other set (symlinked dump files): sets reached
    with fewer links claim their files first."""
    files: dict[tuple[str, str], list[str]] = {}
    links: dict[tuple[str, str], int] = {}
    for key, real, is_link in entries:
        files.setdefault(key, []).append(real)
        links[key] = links.get(key, 0) + is_link
    owner: dict[str, tuple[str, str]] = {}
    kept = []
    for _, key in sorted(enumerate(found), key=lambda ik: (links[ik[1]], ik[0])):
        owners = {owner.get(real) for real in files[key]}
        if len(owners) == 1 and None not in owners:
            continue  # every file already belongs to one listed set: the same dump again
        for real in files[key]:
            owner.setdefault(real, key)
        kept.append(found[key])
    return kept


def read_run_id(file_set: FileSet) -> str | None:
    """The tfdbg_run_id in the set's metadata file, or None while it is not readable yet."""
    if storage.is_remote(file_set.directory):
        try:
            with storage.open_read(file_set.path("metadata")) as f:
                data = f.read(1 << 16)
        except OSError:
            return None
        return _run_id_in(data)
    try:
        # O_NONBLOCK: a FIFO under a dump file's name must not hang discovery until some process writes to it.
        fd = os.open(file_set.path("metadata"), os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            data = f.read(1 << 16)
    except OSError:
        return None
    return _run_id_in(data)


def _run_id_in(data: bytes) -> str | None:
    result = tfrecord.scan(np.frombuffer(data, dtype=np.uint8), 0)
    for start, length in zip(result.starts.tolist(), result.lengths.tolist()):
        event = schema.parse_event(data[start : start + length])
        if event is not None and event.HasField("debug_metadata"):
            return event.debug_metadata.tfdbg_run_id
    return None


def _top_name(root: str, by_dir: dict[str, list[FileSet]]) -> str:
    """The name of the run in the logdir itself: the folder's name (what a person calls it; "." told nothing in the
    picker, the URL or the report), or "." when it has none (the root) or a run below is already called that."""
    name = storage.basename(root.rstrip(os.sep).rstrip("/"))
    below = {storage.relpath(d, root).split("/")[0] for d in by_dir}
    return name if name and name not in below else "."


def group_runs(logdir: str, file_sets: list[FileSet]) -> dict[str, list[FileSet]]:
    """Run name -> its file sets (earliest first). Sets whose run id is still unknown join their directory's
    only run, or form '<dir>' alone when the directory has none yet. The logdir's own run is named after its folder."""
    by_dir: dict[str, list[FileSet]] = {}
    for fs in file_sets:
        by_dir.setdefault(fs.directory, []).append(fs)
    runs: dict[str, list[FileSet]] = {}
    root = logdir if storage.is_remote(logdir) else os.path.abspath(logdir)
    for directory, sets in by_dir.items():
        rel = storage.relpath(directory, root)
        # A directory name that is not UTF-8 arrives with surrogate escapes, which no client can send back (a URL
        # query decodes to U+FFFD; JS encodeURIComponent throws): the run's name uses U+FFFD for those bytes.
        rel = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        if rel == ".":
            rel = _top_name(root, by_dir)
        ids = sorted({s.run_id for s in sets if s.run_id is not None})
        if len(ids) <= 1:
            runs[rel] = sets
            continue
        for run_id in ids:
            runs[f"{rel}#{run_id[:8]}"] = [s for s in sets if s.run_id == run_id]
    return runs

"""Finding tfdbg2 file sets under a logdir and grouping them into runs.

A file set is the six files one writer wrote: tfdbg_events.<epoch>.<host>.<suffix>. Every directory (recursively)
holding file sets yields runs: file sets sharing a tfdbg_run_id are one (multi-host) run; different run ids in one
directory are separate runs named '<dir>#<first 8 chars of the run id>'.
"""

from __future__ import annotations

import dataclasses
import os
import re

import numpy as np

from . import schema, tfrecord

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
        return os.path.join(self.directory, f"{self.prefix}.{suffix}")


def find_file_sets(logdir: str) -> list[FileSet]:
    """Every file set under logdir (a set counts as soon as any of its files exists), sorted by directory, time."""
    found: dict[tuple[str, str], FileSet] = {}
    for directory, dirnames, filenames in os.walk(logdir, followlinks=False):
        dirnames.sort()
        for name in filenames:
            m = _NAME.match(name)
            if m:
                prefix = name[: -len(m.group(3)) - 1]
                key = (directory, prefix)
                if key not in found:
                    found[key] = FileSet(os.path.abspath(directory), prefix, int(m.group(1)), m.group(2))
    return sorted(found.values(), key=lambda s: (s.directory, s.epoch, s.prefix))


def read_run_id(file_set: FileSet) -> str | None:
    """The tfdbg_run_id in the set's metadata file, or None while it is not readable yet."""
    try:
        with open(file_set.path("metadata"), "rb") as f:
            data = f.read(1 << 16)
    except OSError:
        return None
    result = tfrecord.scan(np.frombuffer(data, dtype=np.uint8), 0)
    for start, length in zip(result.starts.tolist(), result.lengths.tolist()):
        event = schema.parse_event(data[start:start + length])
        if event is not None and event.HasField("debug_metadata"):
            return event.debug_metadata.tfdbg_run_id
    return None


def group_runs(logdir: str, file_sets: list[FileSet]) -> dict[str, list[FileSet]]:
    """Run name -> its file sets (earliest first). Sets whose run id is still unknown join their directory's
    only run, or form '<dir>' alone when the directory has none yet."""
    by_dir: dict[str, list[FileSet]] = {}
    for fs in file_sets:
        by_dir.setdefault(fs.directory, []).append(fs)
    runs: dict[str, list[FileSet]] = {}
    root = os.path.abspath(logdir)
    for directory, sets in by_dir.items():
        rel = os.path.relpath(directory, root)
        rel = "." if rel == "." else rel.replace(os.sep, "/")
        # A directory name that is not UTF-8 arrives with surrogate escapes, which no client can send back (a URL
        # query decodes to U+FFFD; JS encodeURIComponent throws): the run's name uses U+FFFD for those bytes.
        rel = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        ids = sorted({s.run_id for s in sets if s.run_id is not None})
        if len(ids) <= 1:
            runs[rel] = sets
            continue
        for run_id in ids:
            runs[f"{rel}#{run_id[:8]}"] = [s for s in sets if s.run_id == run_id]
    return runs

"""Writing a capsule folder (numpy and json only): the arrays first, one .npz per group, then the manifest, all in a
hidden temporary folder renamed into place, so that a capsule folder either is complete or does not exist."""

from __future__ import annotations

import datetime
import json
import os
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from tensorboard_plugin_dbg.reader import capsule_files
from tensorboard_plugin_dbg.reader.capsule_manifest import ArrayEntry, FileEntry, Program

Arrays = dict[str, np.ndarray]
# environment variables that change what the step computes (kept so that a replay can be run alike; the replay
# applies these names only)
ENV_KEPT = capsule_files.ENV_RECORDED


def write_capsule(directory: str, name: str, manifest: Mapping[str, object], groups: dict[str, Arrays]) -> str:
    """The new capsule folder `directory/name` (a suffix is added when the name is taken)."""
    os.makedirs(directory, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".capsule-", dir=directory)
    try:
        # the required groups, then optional ones (forensics.npz) that older readers ignore
        files = {group: _write_group(staging, group, groups[group]) for group in capsule_files.GROUPS}
        files.update({g: _write_group(staging, g, a) for g, a in groups.items() if g in capsule_files.OPTIONAL_GROUPS})
        manifest = dict(manifest, files=files, format=capsule_files.FORMAT)
        manifest["format_version"] = capsule_files.FORMAT_VERSION
        manifest["created"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
        with open(os.path.join(staging, capsule_files.MANIFEST), "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=1, default=_jsonable)
        target = _free_name(os.path.join(directory, name))
        os.rename(staging, target)
        return target
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _write_group(folder: str, group: str, arrays: Arrays) -> FileEntry:
    path = os.path.join(folder, group + ".npz")
    # numpy's own layout (NAME.npy members, stored: a 100 MB model is written at disk speed), member by member: through
    # np.savez(path, **arrays) an array named `file` raised inside the training step and one named `allow_pickle`
    # was silently dropped
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            with archive.open(name + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
    listing: list[ArrayEntry] = [{"name": n, "dtype": str(a.dtype), "shape": list(a.shape)} for n, a in arrays.items()]
    return {"file": group + ".npz", "bytes": os.path.getsize(path), "arrays": listing}


def _free_name(path: str) -> str:
    candidate, n = path, 1
    while os.path.exists(candidate):
        n += 1
        candidate = f"{path}-{n}"
    return candidate


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def program_info() -> Program:
    """The script, its command line and the settings a replay needs to run it alike."""
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else None
    return {
        "script": script,
        "argv": list(sys.argv),
        "executable": sys.executable,
        "cwd": os.getcwd(),
        "env": {k: os.environ[k] for k in ENV_KEPT if k in os.environ},
    }


def append_skip(directory: str, entry: Mapping[str, object]) -> None:
    """One line of the skip list (skipped.jsonl beside the capsules): a batch whose update was not applied."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, SKIP_LIST), "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, default=_jsonable) + "\n")


SKIP_LIST = "skipped.jsonl"

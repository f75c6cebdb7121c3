"""NaN capsules on disk, read with numpy alone (no TensorFlow): the capsule package's `load`, the replay command and
the viewer read them through here.

A capsule is one folder written by `tensorboard_plugin_dbg.capsule` at the first non-finite loss or gradient:

    manifest.json     format name and version, step, epoch, batch index, trigger, the array files' names/bytes,
                      the batch's nesting, RNG notes, versions, devices, the program's argv (written last: a folder
                      without it was never finished)
    batch.npz         the batch exactly as the train step received it, flattened: 'x', 'y/0', 'x/features', ...
    weights.npz       the model's variables (weights and seed-generator states) by their paths
    optimizer.npz     the optimizer's variables by their paths (iterations included)
    rng.npz           RNG states beyond the model's (TensorFlow's global generator)
    replay/           the tfdbg2 dump of `python -m tensorboard_plugin_dbg replay` (a run like any other)
    replay.json       that replay's verdict
    tfdbg/            optional: tfdbg2's circular buffer during training, flushed at the trigger (a run too)

npz keys may hold '/' (numpy stores 'a/b' as the zip member 'a/b.npy' and reads it back as 'a/b').
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import tokenize
import zipfile
from typing import Any, cast

import numpy as np

from tensorboard_plugin_dbg.reader import capsule_remote, storage
from tensorboard_plugin_dbg.reader.capsule_manifest import FORMAT, FORMAT_VERSION, FileEntry, Manifest, Trigger, Verdict

MANIFEST = "manifest.json"
VERDICT = "replay.json"
REPLAY_DIR = "replay"
GROUPS = ("batch", "weights", "optimizer", "rng")
# the environment variables a NanCapsule records on purpose (they change what the step computes) and the only ones a
# replay ever applies from a manifest: any other name in `program.env` (PYTHONPATH, LD_PRELOAD, the replay's own
# TBDBG_CAPSULE_REPLAY...) would let a capsule from someone else choose what runs
ENV_RECORDED = (
    "TF_DETERMINISTIC_OPS",
    "TF_ENABLE_ONEDNN_OPTS",
    "CUDA_VISIBLE_DEVICES",
    "PYTHONHASHSEED",
    "TF_XLA_FLAGS",
)
# written by newer capsules (capsule/forensics.py, capsule/layer_history.py); absent from older ones
OPTIONAL_GROUPS = ("forensics", "layer_history")

Arrays = dict[str, np.ndarray]


class CapsuleError(Exception):
    """A capsule that cannot be read: the message names the folder or file and what is wrong with it."""


@dataclasses.dataclass
class Capsule:
    path: str  # the capsule's folder (absolute)
    manifest: Manifest
    batch: Arrays  # flattened names -> arrays (see `batch_structure` for the nesting)
    weights: Arrays
    optimizer: Arrays
    rng: Arrays

    @property
    def step(self) -> int:
        return int(self.manifest["step"])

    @property
    def trigger(self) -> Trigger:
        return Trigger(**self.manifest["trigger"])

    @property
    def verdict(self) -> Verdict | None:
        """The last replay's verdict (replay.json), None before any replay."""
        return read_verdict(self.path)

    def batch_structure(self) -> Any:
        """The batch nested as the train step received it (dicts, tuples, lists, None)."""
        return rebuild(self.manifest["batch_structure"], self.batch)


def is_capsule(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, MANIFEST))


def find_capsules(folder: str) -> list[str]:
    """Capsule folders at or under `folder` (one level of nesting, then their children), first captured first."""
    folder = os.path.abspath(folder)
    if is_capsule(folder):
        return [folder]
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    found = [os.path.join(folder, n) for n in names if is_capsule(os.path.join(folder, n))]
    return sorted(found, key=_captured_order)


def capsules_below(logdir: str, depth: int = 3) -> list[str]:
    """Capsule folders anywhere under `logdir` down to `depth` levels (a logdir of capsules, or its parent)."""
    root = os.path.abspath(logdir)
    found: list[str] = []
    for folder, subfolders, _ in os.walk(root):
        level = folder[len(root) :].count(os.sep)
        if is_capsule(folder):
            found.append(folder)
            subfolders[:] = []  # a capsule's replay/ is a dump, not a capsule
        elif level >= depth:
            subfolders[:] = []
        else:
            subfolders.sort()
    return sorted(found, key=_captured_order)


def _captured_order(folder: str) -> tuple[str, str]:
    try:
        with open(os.path.join(folder, MANIFEST)) as f:
            manifest = json.load(f)
        return (str(manifest.get("created", "")) if isinstance(manifest, dict) else "", folder)
    except (OSError, ValueError, RecursionError):  # a damaged manifest: its card says why, first in the list
        return ("", folder)


def load(path: str) -> Capsule:
    """The capsule at `path` (a capsule folder, or a folder holding capsules: then the first one captured). `path`
    may be a URL (gs://, s3://, memory://...): the capsule is read through a temporary local copy, and its `path` is
    the capsule folder's URL."""
    if storage.is_remote(path):
        return _load_remote(path)
    if not os.path.isdir(path):
        raise CapsuleError(f"{path}: no such folder")
    found = find_capsules(path)
    if not found:
        raise CapsuleError(f"{path}: not a NaN capsule (no {MANIFEST} in it or in its subfolders)")
    folder = found[0]
    manifest = read_manifest(folder)
    groups = {group: _read_group(folder, manifest, group) for group in GROUPS}
    return Capsule(path=folder, manifest=manifest, **groups)


def _load_remote(url: str) -> Capsule:
    url = storage.normalize(url)
    try:
        with capsule_remote.local_copy(url) as local:
            try:
                found = load(local)
            except CapsuleError as e:  # name the URL, not the temporary copy
                raise CapsuleError(str(e).replace(local, url)) from None
            return dataclasses.replace(found, path=capsule_remote.as_url(found.path, local, url))
    except OSError as e:  # the storage layer's errors: missing bucket, denied credentials, unreachable endpoint
        raise CapsuleError(f"{url}: cannot be read ({e})") from None


def read_manifest(folder: str) -> Manifest:
    """The manifest (of a capsule folder's path or URL), checked: format name and version, the fields every reader
    relies on."""
    path = storage.join(folder, MANIFEST)
    try:
        with storage.open_read(path) as f:  # a URL too: the capsule cards of a remote logdir read it in place
            manifest = json.loads(f.read().decode("utf-8"))
    except FileNotFoundError:
        raise CapsuleError(f"{path}: missing (the capsule was never finished)") from None
    except (OSError, ValueError) as e:
        raise CapsuleError(f"{path}: unreadable or truncated JSON ({e})") from None
    except RecursionError:
        raise CapsuleError(f"{path}: JSON nested too deep to be a manifest") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CapsuleError(f"{path}: not a NaN capsule manifest (format is not {FORMAT!r})")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise CapsuleError(f"{path}: unknown format version {version!r} (this reader knows {FORMAT_VERSION})")
    for key, kind in (("step", int), ("trigger", dict), ("files", dict), ("batch_structure", dict)):
        if key not in manifest:
            raise CapsuleError(f"{path}: field {key!r} is missing")
        if not isinstance(manifest[key], kind) or isinstance(manifest[key], bool):
            raise CapsuleError(f"{path}: field {key!r} is not a {kind.__name__}")
    checked = cast(Manifest, manifest)  # what every reader relies on is checked; other fields are read with care
    recorded_program(checked, path)
    return checked


def recorded_program(manifest: Manifest, where: str = MANIFEST) -> tuple[list[str], str | None, dict[str, str]]:
    """The program a manifest records — (command line, folder, environment) — checked field by field (a capsule may
    come from someone else: a wrong type is a CapsuleError in words, never a traceback)."""
    program = manifest.get("program")
    if program is None:
        program = {}
    if not isinstance(program, dict):
        raise CapsuleError(f"{where}: field 'program' is not an object")
    executable = program.get("executable") or "python"
    argv = program.get("argv") if program.get("argv") is not None else []
    cwd = program.get("cwd") or None
    env = program.get("env") if program.get("env") is not None else {}
    if not isinstance(executable, str) or not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise CapsuleError(f"{where}: field 'program' does not hold a command line (strings)")
    if cwd is not None and not isinstance(cwd, str):
        raise CapsuleError(f"{where}: field 'program.cwd' is not a folder name")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise CapsuleError(f"{where}: field 'program.env' is not an object of strings")
    return [executable, *argv], cwd, env


def check_files(folder: str, manifest: Manifest) -> None:
    """Every array file the manifest lists is there with its size (cheap: no array is read)."""
    for group in GROUPS:
        _group_file(folder, manifest, group)


def check_listed_files(folder: str, manifest: Manifest, listed: dict[str, int]) -> None:
    """check_files for a capsule behind a URL, from the listing's sizes (no request)."""
    for group in GROUPS:
        entry = manifest["files"].get(group)
        if not isinstance(entry, dict) or "file" not in entry:
            raise CapsuleError(f"{storage.join(folder, MANIFEST)}: no entry for the {group} file")
        path = storage.join(folder, os.path.basename(str(entry["file"])))
        if path not in listed:
            raise CapsuleError(f"{path}: missing")
        if listed[path] != entry.get("bytes"):
            raise CapsuleError(
                f"{path}: truncated or changed ({listed[path]} bytes, the manifest says {entry.get('bytes')})"
            )


def _group_file(folder: str, manifest: Manifest, group: str) -> tuple[str, FileEntry]:
    entry = manifest["files"].get(group)
    if not isinstance(entry, dict) or "file" not in entry:
        raise CapsuleError(f"{os.path.join(folder, MANIFEST)}: no entry for the {group} file")
    path = os.path.join(folder, os.path.basename(str(entry["file"])))
    try:
        size = os.path.getsize(path)
    except OSError:
        raise CapsuleError(f"{path}: missing") from None
    if size != entry.get("bytes"):
        raise CapsuleError(f"{path}: truncated or changed ({size} bytes, the manifest says {entry.get('bytes')})")
    return path, entry


def _check_claims(path: str) -> None:
    """Every member's header against its bytes before numpy allocates what the header claims."""
    with zipfile.ZipFile(path) as archive:
        inflated = 0
        for info in archive.infolist():
            if info.compress_type != zipfile.ZIP_STORED:  # the writer never compresses: a zip bomb's way in
                inflated += info.file_size
                if inflated > MAX_INFLATED:
                    raise CapsuleError(
                        f"{path}: compressed members inflate to more than {MAX_INFLATED >> 20} MiB (this capsule was "
                        "not written by NanCapsule, which stores its arrays uncompressed)"
                    )
            with archive.open(info) as member:
                check_member_claim(member, path, info)


MAX_INFLATED = 32 << 20  # bytes the compressed members of one .npz may inflate to (a 1 MB zip bomb: +1.8 GiB)
MAX_NPY_HEADER = 65536  # bytes of a .npy header's dict (numpy's own default limit is 10,000)


def read_npy_header(f: Any, path: str, member: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran order, dtype) of the .npy header at f's position; CapsuleError when it does not parse (numpy
    lets a crafted header's SyntaxError or tokenize.TokenError through)."""
    prefix = f.read(8)
    if len(prefix) < 8 or prefix[:6] != b"\x93NUMPY" or prefix[6:8] not in (b"\x01\x00", b"\x02\x00"):
        raise CapsuleError(f"{path}: member {member} is not a .npy array of version 1.0 or 2.0")
    width = 2 if prefix[6] == 1 else 4
    length_field = f.read(width)
    length = int.from_bytes(length_field, "little") if len(length_field) == width else -1
    if not 0 <= length <= MAX_NPY_HEADER:  # numpy reads the length it is given before checking it: 4 GiB claimed
        raise CapsuleError(
            f"{path}: member {member} has a .npy header of {length:,} bytes (at most {MAX_NPY_HEADER:,})"
        )
    header = io.BytesIO(prefix + length_field + f.read(length))
    try:
        version = np.lib.format.read_magic(header)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(header)
    except (ValueError, SyntaxError, TypeError, tokenize.TokenError, MemoryError, RecursionError) as e:
        raise CapsuleError(f"{path}: member {member} has no readable .npy header ({type(e).__name__})") from None
    return tuple(shape), bool(fortran), dtype


def check_member_claim(member: Any, path: str, info: zipfile.ZipInfo) -> None:
    """A .npz member's .npy header read first: what it claims (a Python int, never a wrapping int64 product) must fit
    in the bytes the zip says the member holds, so decoding it allocates no more than the file is worth."""
    shape, _fortran, dtype = read_npy_header(member, path, info.filename)
    claimed = math.prod(int(d) for d in shape) * dtype.itemsize
    if dtype.hasobject or claimed > info.file_size:
        raise CapsuleError(
            f"{path}: member {info.filename} holds {info.file_size} bytes, its header says {dtype}{list(shape)}"
        )


def read_optional_group(folder: str, manifest: Manifest, group: str) -> Arrays | None:
    """An optional group's arrays (OPTIONAL_GROUPS), or None when this capsule's version wrote none."""
    return _read_group(folder, manifest, group) if group in manifest["files"] else None


def _read_group(folder: str, manifest: Manifest, group: str) -> Arrays:
    path, entry = _group_file(folder, manifest, group)
    try:
        _check_claims(path)
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, NotImplementedError, EOFError) as e:
        raise CapsuleError(f"{path}: unreadable ({e})") from None
    except MemoryError:  # a member header claiming a shape far beyond its bytes (someone else's capsule)
        raise CapsuleError(f"{path}: an array claims more memory than can be had (damaged or crafted header)") from None
    expected = [a["name"] for a in entry["arrays"]]
    missing = [name for name in expected if name not in arrays]
    if missing:
        raise CapsuleError(f"{path}: arrays missing: {', '.join(missing[:5])}")
    return {name: arrays[name] for name in expected}


def read_verdict(folder: str) -> Verdict | None:
    """The last replay's verdict (a capsule folder's path or URL), None before any replay."""
    try:
        with storage.open_read(storage.join(folder, VERDICT)) as f:
            verdict = json.load(f)
    except (OSError, ValueError):
        return None
    return cast(Verdict, verdict) if isinstance(verdict, dict) else None  # its fields are read with .get


# --- the batch's nesting: a JSON spec of dicts/tuples/lists/None around named arrays -------------------------------


def rebuild(spec: Any, arrays: Arrays) -> Any:
    """The nested batch from its spec (capsule/structure.py flatten) and the flat arrays."""
    kind = spec["kind"]
    if kind == "array":
        return arrays[spec["name"]]
    if kind == "none":
        return None
    if kind == "dict":
        return {key: rebuild(item, arrays) for key, item in spec["items"]}
    items = [rebuild(item, arrays) for item in spec["items"]]
    return tuple(items) if kind == "tuple" else items


# --- health of an array (numpy): what the capsule card and the trigger show ----------------------------------------


def health_counts(array: np.ndarray) -> dict[str, int]:
    """size, NaN, +inf, -inf counts (integers and bools are always finite)."""
    a = np.asarray(array)
    if not np.issubdtype(a.dtype, np.inexact):
        return {"size": int(a.size), "nan": 0, "pos_inf": 0, "neg_inf": 0}
    return {
        "size": int(a.size),
        "nan": int(np.count_nonzero(np.isnan(a))),
        "pos_inf": int(np.count_nonzero(np.isposinf(a))),
        "neg_inf": int(np.count_nonzero(np.isneginf(a))),
    }


def per_sample_health(array: np.ndarray) -> list[dict[str, float | int]]:
    """For each sample (first axis) of a batch array: its non-finite count and max |x| over its finite values."""
    bad, peak = per_sample_columns(array)
    return [{"sample": i, "nonfinite": int(bad[i]), "max_abs": float(peak[i])} for i in range(len(bad))]


def per_sample_columns(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """per_sample_health as two numpy columns (non-finite count, max finite |x|), one entry per sample: no Python
    object per sample (a batch of a million samples)."""
    a = np.asarray(array)
    if a.ndim == 0:
        a = a.reshape(1)
    rows = a.reshape(a.shape[0], -1)
    if not rows.shape[1]:
        return np.zeros(len(rows), np.int64), np.zeros(len(rows))
    if not np.issubdtype(rows.dtype, np.inexact):
        return np.zeros(len(rows), np.int64), np.abs(rows.astype(np.float64)).max(axis=1)
    finite = np.isfinite(rows)
    bad = rows.shape[1] - np.count_nonzero(finite, axis=1)
    peak = np.abs(np.where(finite, rows, 0)).max(axis=1).astype(np.float64)
    return bad.astype(np.int64), peak

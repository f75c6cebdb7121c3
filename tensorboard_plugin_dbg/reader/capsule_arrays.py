"""One array of a NaN capsule located where it lies, without loading its `.npz` (numpy only, local or URL).

A capsule's groups are uncompressed `.npz` files (capsule/writer.py: `np.savez`), so a member `NAME.npy` is stored
as it is inside the zip: its local file header, then the `.npy` header, then the elements in C order. `locate`
reads the zip's central directory and the two headers (a few KiB, through the storage layer: a URL is read by range
like a dump) and answers a `tensor_content.TensorLocation` pointing at the elements in the `.npz` itself, so the
Tensor Values code that slices and summarizes a FULL_TENSOR value in a dump reads a 100 MB weight the same way,
block by block. A member that is compressed, in Fortran order or of strings is decoded into memory (`small`). A
bfloat16 array (numpy stores it as 2-byte voids; the manifest names its dtype) is read as its raw words, as a
bfloat16 FULL_TENSOR value is.

Errors: `ArrayNotFound` for a name the group does not hold (the caller's mistake), `capsule_files.CapsuleError`
for a file that is missing, truncated or not what its headers say (the capsule's damage): both name the file.
"""

from __future__ import annotations

import contextlib
import math
import posixpath
import struct
import zipfile
from collections.abc import Iterator
from typing import BinaryIO

import numpy as np

from tensorboard_plugin_dbg.reader import capsule_files, debug_values, storage, tensor_content, tensor_proto
from tensorboard_plugin_dbg.reader.capsule_manifest import FileEntry, Manifest

_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")  # zip local file header: 30 bytes, then name and extra field
_LOCAL_SIGNATURE = b"PK\x03\x04"
_DTYPE_ENUMS = {name: enum for enum, (name, _storage, _typed) in tensor_proto.DTYPES.items()}
_MAX_IN_MEMORY = 32 << 20  # a member decoded whole (compressed, Fortran order, strings): at most this many bytes
# (decoded again for each window asked: 256 MiB cost 8.5 s and +370 MiB a window; the writer never compresses)
_HEALTH_BLOCK = 1 << 20  # elements counted at a time (a weight's health)


class ArrayNotFound(LookupError):
    """The group holds no array of that name; the message lists some that it holds."""


def locate(folder: str, group: str, name: str) -> tuple[tensor_content.TensorLocation, Manifest]:
    """Where array `name` of `group` (batch, weights, optimizer, rng) of the capsule at `folder` (path or URL) is,
    and the capsule's manifest. Raises ArrayNotFound or capsule_files.CapsuleError."""
    manifest = capsule_files.read_manifest(folder)
    found = _locations(folder, manifest, group, [name])
    return found[name], manifest


def locate_group(folder: str, manifest: Manifest, group: str) -> dict[str, tensor_content.TensorLocation]:
    """Every array of `group` (the manifest's order) located in one open of its file. Raises CapsuleError."""
    return _locations(folder, manifest, group, None)


def _locations(
    folder: str, manifest: Manifest, group: str, names: list[str] | None
) -> dict[str, tensor_content.TensorLocation]:
    entry = manifest["files"].get(group)
    if not isinstance(entry, dict) or not isinstance(entry.get("arrays"), list) or "file" not in entry:
        raise capsule_files.CapsuleError(
            f"{storage.join(folder, capsule_files.MANIFEST)}: no entry for the {group} file"
        )
    path = storage.join(folder, posixpath.basename(str(entry["file"])))
    listed = {str(a.get("name")): str(a.get("dtype")) for a in entry["arrays"] if isinstance(a, dict)}
    for name in names or []:
        if name not in listed:
            shown = ", ".join(sorted(listed)[:8]) + (", ..." if len(listed) > 8 else "")
            raise ArrayNotFound(f"the capsule's {group} holds no array {name!r} (it holds: {shown or 'none'})")
    try:
        with storage.open_read(path) as f:
            _check_size(f, path, entry)
            budget = [_MAX_IN_MEMORY]  # bytes the decoded members of this file may still take, all together
            return {name: _member_location(f, path, name, listed[name], budget) for name in (names or list(listed))}
    except FileNotFoundError:
        raise capsule_files.CapsuleError(f"{path}: missing") from None
    except (OSError, zipfile.BadZipFile, ValueError, EOFError, struct.error) as e:
        raise capsule_files.CapsuleError(f"{path}: unreadable ({e})") from None


def read_whole(loc: tensor_content.TensorLocation) -> np.ndarray:
    """A located array's values in its shape (bfloat16 widened to float32), by one ranged read: for the batch,
    whose per-sample health the capsule card shows."""
    try:
        raw = tensor_content.read_range(loc, 0, loc.size)
    except (OSError, tensor_content.ContentError) as e:
        raise capsule_files.CapsuleError(f"{loc.path}: unreadable ({e})") from None
    return debug_values.content_values(raw, loc.dtype).reshape(loc.shape)


def health(loc: tensor_content.TensorLocation) -> dict[str, int]:
    """capsule_files.health_counts of a located array, read block by block (a 100 MB weight never held whole)."""
    total = {"size": loc.size, "nan": 0, "pos_inf": 0, "neg_inf": 0}
    try:
        for _first, block in tensor_content.blocks(loc, _HEALTH_BLOCK):
            counts = capsule_files.health_counts(block)
            for key in ("nan", "pos_inf", "neg_inf"):
                total[key] += counts[key]
    except (OSError, tensor_content.ContentError) as e:
        raise capsule_files.CapsuleError(f"{loc.path}: unreadable ({e})") from None
    return total


def samples_of(loc: tensor_content.TensorLocation) -> int:
    """How many samples (first-axis rows) a batch array holds: a scalar is one."""
    return int(loc.shape[0]) if loc.shape else 1


def sample_columns(
    loc: tensor_content.TensorLocation, block: int = _HEALTH_BLOCK
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """capsule_files.per_sample_columns of a located batch array read block by block: (first sample, non-finite
    counts, max finite |x|) of consecutive samples, about `block` elements at a time whatever the array's size (a
    sample wider than a block is read in pieces). Arrays with no element (or of strings) yield all-zero columns for
    their first `block` samples only: no later sample can rank before them."""
    samples = samples_of(loc)
    width = loc.size // samples if samples else 0
    try:
        if width == 0 or loc.storage is None:
            count = min(samples, block)
            yield 0, np.zeros(count, np.int64), np.zeros(count)
        elif width <= block:
            per = block // width
            for first in range(0, samples, per):
                rows = min(per, samples - first)
                values = debug_values.content_values(
                    tensor_content.read_range(loc, first * width, rows * width), loc.dtype
                )
                yield (first, *capsule_files.per_sample_columns(values.reshape(rows, width)))
        else:
            for sample in range(samples):
                yield sample, *_wide_sample(loc, sample * width, width, block)
    except (OSError, tensor_content.ContentError) as e:
        raise capsule_files.CapsuleError(f"{loc.path}: unreadable ({e})") from None


def _wide_sample(
    loc: tensor_content.TensorLocation, start: int, width: int, block: int
) -> tuple[np.ndarray, np.ndarray]:
    bad, peak = 0, 0.0
    for first in range(0, width, block):
        count = min(block, width - first)
        values = debug_values.content_values(tensor_content.read_range(loc, start + first, count), loc.dtype)
        b, p = capsule_files.per_sample_columns(values.reshape(1, count))
        bad, peak = bad + int(b[0]), max(peak, float(p[0]))
    return np.array([bad], np.int64), np.array([peak])


def _check_size(f: BinaryIO, path: str, entry: FileEntry) -> None:
    size = storage.size_of(f)
    if size != entry.get("bytes"):
        raise capsule_files.CapsuleError(
            f"{path}: truncated or changed ({size} bytes, the manifest says {entry.get('bytes')})"
        )


def _member_location(
    f: BinaryIO, path: str, name: str, listed_dtype: str, budget: list[int]
) -> tensor_content.TensorLocation:
    """`listed_dtype`: the manifest's dtype name of the array (numpy saves a bfloat16 array as raw 2-byte voids);
    `budget`: the bytes members decoded into memory may still take (a zip bomb of many members is bounded too)."""
    with _zip_errors_as_damage(path), zipfile.ZipFile(f) as archive:
        try:
            info = archive.getinfo(name + ".npy")
        except KeyError:
            raise capsule_files.CapsuleError(f"{path}: member {name}.npy is missing") from None
        if info.compress_type == zipfile.ZIP_STORED:
            loc = _stored_location(f, path, info, listed_dtype)
            if loc is not None:
                return loc
        if info.file_size > budget[0]:
            raise capsule_files.CapsuleError(
                f"{path}: member {name}.npy is compressed or in Fortran order and would inflate to "
                f"{info.file_size:,} bytes (at most {_MAX_IN_MEMORY >> 20} MiB per file are decoded here; NanCapsule "
                "stores its arrays uncompressed)"
            )
        budget[0] -= info.file_size
        with archive.open(info) as member:  # checks the member's CRC as it reads
            capsule_files.check_member_claim(member, path, info)
        with archive.open(info) as member:
            try:
                array = np.lib.format.read_array(member, allow_pickle=False)
            except MemoryError:
                raise capsule_files.CapsuleError(
                    f"{path}: member {info.filename} claims more memory than exists"
                ) from None
    return _in_memory(path, array, listed_dtype)


@contextlib.contextmanager
def _zip_errors_as_damage(path: str) -> Iterator[None]:
    """What zipfile raises on a damaged archive (a flipped flag: NotImplementedError too) as the capsule's damage."""
    try:
        yield
    except (zipfile.BadZipFile, NotImplementedError, EOFError) as e:
        raise capsule_files.CapsuleError(f"{path}: unreadable ({type(e).__name__}: {e})") from None


def _stored_location(
    f: BinaryIO, path: str, info: zipfile.ZipInfo, listed_dtype: str
) -> tensor_content.TensorLocation | None:
    """The member's elements in the file itself; None when they must be decoded (Fortran order, strings)."""
    f.seek(info.header_offset)
    fields = _LOCAL_HEADER.unpack(f.read(_LOCAL_HEADER.size))
    if fields[0] != _LOCAL_SIGNATURE:
        raise capsule_files.CapsuleError(f"{path}: member {info.filename} has no local header where the zip says")
    start = info.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10]
    f.seek(start)
    shape, fortran, dtype = capsule_files.read_npy_header(f, path, info.filename)
    content = f.tell()
    count = math.prod(int(d) for d in shape)  # a Python int: an int64 product of a crafted shape wraps
    bfloat16 = _is_bfloat16(dtype, listed_dtype)
    if (fortran and len(shape) > 1) or (dtype.kind not in "fiucb" and not bfloat16):
        return None
    if content - start + count * dtype.itemsize != info.file_size:
        raise capsule_files.CapsuleError(
            f"{path}: member {info.filename} holds {info.file_size} bytes, its header says {dtype}{list(shape)}"
        )
    name = "bfloat16" if bfloat16 else dtype.name
    return tensor_content.TensorLocation(
        path=path,
        dtype_enum=_DTYPE_ENUMS.get(name, 0),
        dtype=name,
        shape=tuple(int(d) for d in shape),
        storage="<u2" if bfloat16 else dtype.str,  # bfloat16: its raw words, widened where computed with
        content_offset=content,
        content_bytes=count * dtype.itemsize,
    )


def _is_bfloat16(dtype: np.dtype, listed_dtype: str) -> bool:
    return dtype.kind == "V" and dtype.itemsize == 2 and listed_dtype == "bfloat16"


def _in_memory(path: str, array: np.ndarray, listed_dtype: str) -> tensor_content.TensorLocation:
    """A decoded member as a location holding its flat values (strings: as text, counted only by the stats)."""
    flat = np.ascontiguousarray(array).reshape(-1)
    shape = tuple(int(d) for d in array.shape)
    if _is_bfloat16(flat.dtype, listed_dtype):
        return tensor_content.TensorLocation(path, 14, "bfloat16", shape, "<u2", small=flat.view("<u2"))
    if flat.dtype.kind in "SU":
        return tensor_content.TensorLocation(path, 7, "string", shape, None, small=flat)
    if flat.dtype.kind not in "fiucb":
        raise capsule_files.CapsuleError(f"{path}: an array of dtype {flat.dtype} cannot be shown")
    return tensor_content.TensorLocation(
        path, _DTYPE_ENUMS.get(flat.dtype.name, 0), flat.dtype.name, shape, flat.dtype.str, small=flat
    )

"""The one JSON encoder of the API (wire.ts "Encoding rules").

- A non-finite float becomes the string "NaN", "Infinity" or "-Infinity" (wire.ts `Num`): strict JSON has no
  spelling for them, and `JSON.parse` in the browser rejects the bare `NaN` Python's json module writes by default.
- numpy scalars and arrays become JSON numbers, booleans and arrays; bytes become text (invalid UTF-8 replaced).
- The body is gzipped when the client accepts gzip and the body is big enough for it to pay.

Speed (a 100-row page is ~2,000 values; on 2 shared cores every request's CPU is everyone's latency):
- orjson, when installed, writes a body ~10x faster than the json module, but it writes `null` for a non-finite
  float. So it is only used where no non-finite float can be: the value is walked (a few hundred nodes at most)
  and every float checked, except inside lists whose class sets `json_finite = True` — the index's pages
  (index/record_reads.FiniteList), whose producer checked their floats with numpy. Anything else (a non-finite
  float, numpy objects, a non-str key, an int beyond 64 bits, a big unvouched value) takes the stdlib path.
- The stdlib path is one `json.dumps` call; only when it fails do we walk the value and convert it
  (`to_jsonable`).
"""

from __future__ import annotations

import json
import math
import threading
import zlib
from collections import OrderedDict
from typing import Any

import numpy as np

try:
    import orjson
except ImportError:  # optional: the stdlib path gives the same JSON, slower
    orjson = None  # type: ignore[assignment]

# Below this size gzip costs more (CPU, header bytes) than it saves.
GZIP_MIN_BYTES = 1024
# Level 1: a 100-row page compresses in ~0.05 ms instead of ~0.14 ms at level 5, for ~20% more bytes (3.2 vs 2.7
# KB); on 2 shared cores the CPU matters more than a few KB. The stream is gzip (wbits 31), without a timestamp.
GZIP_LEVEL = 1
# Bodies at least this big keep their compressed form (keyed by the exact bytes): a whole source file (~200 KB of
# JSON) costs ~1.3 ms to compress but ~0.2 ms to look up, and such answers repeat (source files never change).
_GZ_CACHE_MIN = 32 << 10
_GZ_CACHE_BYTES = 16 << 20
_WALK_BUDGET = 512  # nodes checked for non-finite floats before orjson; bigger unvouched values take json

_NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def _float(value: float) -> Any:
    if math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else _NON_FINITE[value]


def to_jsonable(value: Any) -> Any:
    """`value` with every non-finite float spelled as a string and every numpy/bytes object converted."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (float, np.floating)):
        return _float(float(value))
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, dict):
        return {_key(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, np.generic):  # e.g. np.str_, np.bytes_, complex: let .item() give the Python value
        return to_jsonable(value.item())
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, (bytes, bytearray)):
        return bytes(key).decode("utf-8", errors="replace")
    return str(to_jsonable(key))


def _default(value: Any) -> Any:
    # Called by json.dumps for what it cannot encode itself; anything non-finite it produces makes dumps raise
    # ValueError (allow_nan=False), which sends us to the slow path.
    converted = to_jsonable(value)
    if converted is value:
        raise TypeError(f"cannot encode {type(value).__name__} as JSON")
    return converted


def dumps(value: Any) -> str:
    """Compact, strict JSON text of `value` (see module docstring)."""
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":"), default=_default)
    except (ValueError, TypeError):
        # A non-finite float (ValueError) or a numpy dict key (TypeError) somewhere: convert everything first.
        return json.dumps(to_jsonable(value), allow_nan=False, separators=(",", ":"))


def _orjson_safe(value: Any) -> bool:
    """Whether orjson writes `value` as the stdlib path would: no float outside a `json_finite` list is
    non-finite, every leaf is a str, int, float, bool or None (exact types: numpy scalars and subclasses go to
    the stdlib path), and the value is small enough to check here (see _WALK_BUDGET)."""
    budget = _WALK_BUDGET
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is str or t is int or t is bool or v is None:
            continue
        if t is float:
            if not math.isfinite(v):
                return False
        elif t is dict or t is list or t is tuple:
            budget -= len(v)
            if budget < 0:
                return False
            stack.extend(v.values() if t is dict else v)
        elif not getattr(t, "json_finite", False):
            return False
    return True


def encode(value: Any) -> bytes:
    """UTF-8 JSON of `value`: the same JSON value as `dumps` (byte spelling may differ: orjson writes non-ASCII
    as UTF-8 where json escapes it, and spells some floats differently, e.g. 1e-7 for 1e-07)."""
    if orjson is not None and _orjson_safe(value):
        try:
            return orjson.dumps(value)
        except TypeError:  # a non-str key, an int beyond 64 bits, a lone surrogate: the stdlib path takes them
            pass
    return dumps(value).encode("utf-8")


def encode_body(value: Any, accept_gzip: bool) -> tuple[bytes, bool]:
    """UTF-8 JSON bytes of `value`, gzipped when `accept_gzip` and worthwhile; returns (body, gzipped)."""
    body = encode(value)
    if accept_gzip and len(body) >= GZIP_MIN_BYTES:
        return gzip_bytes(body), True
    return body, False


def _gzip(body: bytes) -> bytes:
    # a compressor object: zlib.compress takes `wbits` (31: a gzip header) only from Python 3.11 on
    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)
    return packer.compress(body) + packer.flush()


def gzip_bytes(body: bytes) -> bytes:
    """`body` as a gzip stream (no timestamp, so equal bodies give equal bytes)."""
    if len(body) < _GZ_CACHE_MIN:
        return _gzip(body)
    with _gz_lock:
        hit = _gz_cache.get(body)
        if hit is not None:
            _gz_cache.move_to_end(body)
            return hit
    packed = _gzip(body)
    global _gz_cached_bytes
    with _gz_lock:
        if body not in _gz_cache:
            _gz_cache[body] = packed
            _gz_cached_bytes += len(body) + len(packed)
        while _gz_cached_bytes > _GZ_CACHE_BYTES and _gz_cache:
            old, old_packed = _gz_cache.popitem(last=False)
            _gz_cached_bytes -= len(old) + len(old_packed)
    return packed


_gz_cache: OrderedDict[bytes, bytes] = OrderedDict()
_gz_cached_bytes = 0
_gz_lock = threading.Lock()

"""The one JSON encoder of the API (wire.ts "Encoding rules").

- A non-finite float becomes the string "NaN", "Infinity" or "-Infinity" (wire.ts `Num`): strict JSON has no
  spelling for them, and `JSON.parse` in the browser rejects the bare `NaN` Python's json module writes by default.
- numpy scalars and arrays become JSON numbers, booleans and arrays; bytes become text (invalid UTF-8 replaced).
- The body is gzipped when the client accepts gzip and the body is big enough for it to pay.

Speed: most responses hold no non-finite value and no numpy object the standard encoder cannot take, so the fast
path is one `json.dumps` call; only when it fails do we walk the value and convert it (`to_jsonable`).
"""

from __future__ import annotations

import gzip
import json
import math
from typing import Any

import numpy as np

# Below this size gzip costs more (CPU, header bytes) than it saves.
GZIP_MIN_BYTES = 1024

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


def encode_body(value: Any, accept_gzip: bool) -> tuple[bytes, bool]:
    """UTF-8 JSON bytes of `value`, gzipped when `accept_gzip` and worthwhile; returns (body, gzipped)."""
    body = dumps(value).encode("utf-8")
    if accept_gzip and len(body) >= GZIP_MIN_BYTES:
        # Level 5: nearly the ratio of 9 at a fraction of the CPU (2 cores are shared with the indexer).
        return gzip.compress(body, compresslevel=5, mtime=0), True
    return body, False

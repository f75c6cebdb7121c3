"""Reading records back for a RunIndex, and handing memory back to the OS (kept out of run_index.py)."""

from __future__ import annotations

from ..reader import schema, tfrecord

_SPAN = 1 << 20  # read_trace_events: records within this many bytes are read in one go
_TAIL = 4096  # ...plus this much past the last one's start (a FULL_HEALTH trace record is ~240 bytes)


def read_trace_events(run, rows) -> dict:
    """{row: DebugEvent} for trace rows (bounds checked by the caller). A page's records are neighbours on
    disk, so each file is read once per span of nearby records instead of one open + seek + read per row
    (100 rows: ~1 ms less); a record the span does not cover whole is read on its own."""
    from .run_index import LOC_MASK, LOC_SHIFT  # here: run_index imports this module

    locs = run.traces.view("loc")
    out: dict = {}
    by_file: dict[int, list] = {}
    for row in rows:
        loc = int(locs[row])
        key = (loc >> LOC_SHIFT, loc & LOC_MASK)
        with run._cache_lock:
            cached = run._record_cache.get(key)
        if cached is not None:
            out[row] = cached
        else:
            by_file.setdefault(key[0], []).append((key[1], row))
    for code, items in by_file.items():
        items.sort()
        with open(run.files[code].path, "rb") as f:
            i = 0
            while i < len(items):
                j = i
                while j + 1 < len(items) and items[j + 1][0] - items[i][0] < _SPAN:
                    j += 1
                start = items[i][0] - 12
                f.seek(start)
                data = f.read(items[j][0] - start + _TAIL)
                for offset, row in items[i:j + 1]:
                    at = offset - start
                    length = int.from_bytes(data[at - 12:at - 4], "little") if at + 4 <= len(data) else -1
                    if 0 <= length <= tfrecord.MAX_RECORD and at + length <= len(data):
                        event = schema.parse_event(data[at:at + length])
                        if event is not None:
                            out[row] = event
                            continue
                    out[row] = run.read_event(code, offset)  # long record, or let it raise as one read would
                i = j + 1
    return out


def trim_heap() -> None:
    """Hands the heap's free pages back to the OS after a pass. A pass frees its chunk buffers and decode
    temporaries (tens of MB) inside the heap, where glibc keeps them as resident memory; this is what keeps the
    process RSS near what the index holds. No-op where glibc is not there."""
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        try:
            import ctypes
            _MALLOC_TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _MALLOC_TRIM = False
    if _MALLOC_TRIM:
        _MALLOC_TRIM(0)


_MALLOC_TRIM = None

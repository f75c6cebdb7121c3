"""How the plugin tunes the TensorBoard process it lives in: two process-wide settings, each measured to matter.

TensorBoard answers every request on a thread of its own, and those threads, the plugin's refresher and one GIL
share the process. Both settings are cheap, idempotent, and applied at plugin construction and again when the
catalog is made (the first request), so whatever TensorBoard did in between is covered.
"""

from __future__ import annotations

import ctypes
import gc

_M_ARENA_MAX = -8  # glibc mallopt parameter (malloc.h)
MALLOC_ARENAS = 2


def freeze_startup_heap() -> None:
    """Moves every object alive now (TensorBoard's and TensorFlow's imports: ~340 K) out of the garbage collector's
    sight. Each full collection walked them all with the GIL held: 180-260 ms, during which every request waited
    (bench/load.py's p99 was exactly that stall, even on TensorBoard's own routes). They live as long as the
    process anyway. No collection first (that would be the same pause): the few hundred objects that may be
    garbage already are kept, once."""
    gc.freeze()


def limit_malloc_arenas() -> bool:
    """Caps glibc's malloc arenas at MALLOC_ARENAS (default: 8 per core). Each new request thread could get an arena
    of its own, and every arena keeps the memory its threads freed: at 1 M traces the dashboard's scrolling alone
    left ~6 MiB behind and the indexer's chunk buffers ~7 MiB (bench/run.py "RSS after every query"). Python threads
    hold the GIL while they allocate, so they hardly contend for an arena anyway. False where there is no glibc."""
    try:
        return bool(ctypes.CDLL("libc.so.6").mallopt(_M_ARENA_MAX, MALLOC_ARENAS))
    except (OSError, AttributeError):
        return False


def tune() -> None:
    freeze_startup_heap()
    limit_malloc_arenas()

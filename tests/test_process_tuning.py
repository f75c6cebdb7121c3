"""How the plugin tunes TensorBoard's process (process_tuning.py): the startup heap is frozen, malloc arenas capped."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

from tensorboard.plugins import base_plugin

from tensorboard_plugin_dbg import process_tuning
from tensorboard_plugin_dbg.plugin import DbgPlugin, NoLogdirCatalog


def test_the_plugin_takes_the_startup_heap_out_of_the_collectors_sight(tmp_path):
    """A full collection walked TensorBoard's and TensorFlow's ~340 K startup objects with the GIL held (~200 ms,
    every request waiting). The plugin freezes what exists when it is made, and again when its catalog is."""
    made_before = [object()]  # a tracked container: frozen by the constructor
    assert _in_collectors_sight(made_before)
    before = gc.get_freeze_count()
    plugin = DbgPlugin(base_plugin.TBContext(logdir=str(tmp_path)), catalog_factory=lambda _: NoLogdirCatalog())
    after_init = gc.get_freeze_count()
    assert after_init > before
    # The effect: a full collection no longer looks at what existed when the plugin was made.
    assert not _in_collectors_sight(made_before)
    made_between = [object()]  # frozen when the catalog is made
    assert _in_collectors_sight(made_between)
    plugin.catalog()
    assert gc.get_freeze_count() > after_init
    assert not _in_collectors_sight(made_between)
    made_after = [object()]  # made after both: a collection still sees it (nothing else is frozen)
    assert _in_collectors_sight(made_after)


def _in_collectors_sight(obj) -> bool:
    """Whether the collector tracks `obj` in one of its generations (gc.get_objects() lists exactly those; frozen
    objects sit in the permanent generation, which no collection walks)."""
    return any(o is obj for o in gc.get_objects())


# In a child process (the cap is process-wide): 8 threads each allocate and keep 4 MiB in 64 KiB blocks (below
# glibc's mmap threshold, so from an arena); then glibc's own report counts the arenas ("<heap nr=...>").
_ARENAS = textwrap.dedent("""
    import ctypes, os, sys, tempfile, threading
    if sys.argv[1] == "tuned":  # the plugin made as TensorBoard makes it: its constructor sets the cap
        from tensorboard.plugins import base_plugin
        from tensorboard_plugin_dbg.plugin import DbgPlugin, NoLogdirCatalog
        DbgPlugin(base_plugin.TBContext(logdir=tempfile.gettempdir()), catalog_factory=lambda _: NoLogdirCatalog())
    kept, ready = [], threading.Barrier(8)
    def work():
        ready.wait()
        kept.append([bytearray(64 << 10) for _ in range(64)])
    threads = [threading.Thread(target=work) for _ in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    libc = ctypes.CDLL("libc.so.6")
    libc.fopen.restype = ctypes.c_void_p
    fd, path = tempfile.mkstemp()
    os.close(fd)
    f = libc.fopen(path.encode(), b"w")
    libc.malloc_info(0, ctypes.c_void_p(f))
    libc.fclose(ctypes.c_void_p(f))
    print(open(path).read().count("<heap nr="))
    os.unlink(path)
""")


def _arenas(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", _ARENAS, mode], capture_output=True, text=True, timeout=60, check=True)
    return int(out.stdout.strip())


def test_malloc_arenas_are_capped():
    """Without the plugin the eight threads get arenas of their own; in a process where the plugin was made they
    share at most MALLOC_ARENAS (the main arena included)."""
    untuned = _arenas("plain")
    assert untuned > process_tuning.MALLOC_ARENAS  # the threads did get arenas of their own without the cap
    assert 1 <= _arenas("tuned") <= process_tuning.MALLOC_ARENAS

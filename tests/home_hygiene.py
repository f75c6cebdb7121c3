"""What a test run may leave in $HOME: the folders where the tools a test starts keep their configuration and caches
when nobody says otherwise (Keras' keras.json in ~/.keras, Chromium's crash database in ~/.config and dconf's in
~/.cache, XDG caches such as JAX's or fontconfig's, CUDA's ~/.nv, NSS's ~/.pki).

CI's home starts empty and is thrown away, so it would never notice them; a developer's home keeps them. The
session's conftest lists these folders' entries (a few levels deep: enough to see a tool's new folder or file, cheap
even over a large pip cache) before the run and fails the run on any new one after it.
"""

from __future__ import annotations

import os

HOME = os.path.expanduser("~")
WATCHED = (".keras", ".cache", ".config", ".local/share", ".nv", ".pki", ".matplotlib", ".jax")
DEPTH = 3


def entries(home: str = HOME) -> set[str]:
    """The paths (up to DEPTH levels below each watched folder, the folder itself included) that exist now."""
    found: set[str] = set()
    for name in WATCHED:
        top = os.path.join(home, name)
        if not os.path.lexists(top):
            continue
        found.add(top)
        for folder, dirs, files in os.walk(top):
            level = os.path.relpath(folder, top).count(os.sep) + (folder != top)
            found.update(os.path.join(folder, n) for n in dirs + files)
            if level + 1 >= DEPTH:
                dirs[:] = []
    return found


def new_since(before: set[str], home: str = HOME) -> list[str]:
    """The watched entries that appeared since `before`, each reported once under its topmost new folder."""
    new = sorted(entries(home) - before)
    return [p for p in new if not any(p.startswith(q + os.sep) for q in new)]

"""The frames a JAX op or call is recorded with: the user's, outermost first (JAX's and this package's own frames
are left out, so a dump does not carry JAX's sources; the dashboard would treat them as library code anyway)."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable
from typing import Any

from ..writer.events import Frame

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _internal_dirs() -> tuple[str, ...]:
    import jax
    import jaxlib

    return tuple(os.path.dirname(os.path.abspath(m.__file__ or "")) + os.sep for m in (jax, jaxlib)) + (
        _PACKAGE + os.sep,
    )


_INTERNAL: tuple[str, ...] = ()


@functools.lru_cache(maxsize=4096)  # asked for every frame of every recorded call
def kept(path: str) -> bool:
    """Whether a file is the user's (not JAX's, jaxlib's or this package's)."""
    global _INTERNAL
    if not _INTERNAL:
        _INTERNAL = _internal_dirs()
    return not os.path.abspath(path).startswith(_INTERNAL)


def _outermost_first(frames: Iterable[Frame]) -> list[Frame]:
    return [f for f in frames if kept(f[0])]


def of_equation(source_info: Any) -> list[Frame]:
    """An equation's `source_info.traceback` (innermost first) as kept frames, outermost first."""
    tb = getattr(source_info, "traceback", None)
    if tb is None:
        return []
    frames = [(f.file_name, int(f.line_num), f.function_name) for f in tb.frames]
    return _outermost_first(reversed(frames))


def of_caller() -> list[Frame]:
    """The current Python stack (a jitted function's call site) as kept frames, outermost first (read from the
    frames themselves: no source line is looked up, once per recorded call)."""
    frames: list[Frame] = []
    f: Any = sys._getframe(1)
    while f is not None:
        frames.append((f.f_code.co_filename, int(f.f_lineno or 0), f.f_code.co_name))
        f = f.f_back
    return _outermost_first(reversed(frames))

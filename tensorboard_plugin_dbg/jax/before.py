"""The user's functions wrapped by `jax.jit` before `enable_dump_debug_info`: their calls cannot be recorded (the
recording `jit` replaces `jax.jit` from the call on; a function wrapped earlier holds JAX's own compiled callable,
whose calls skip Python once compiled). They are found among the live objects and named on stderr. Where eager.py
hooks JAX's jitted dispatch (JAX 0.10), their calls are recorded as executions (outputs and call site, not their
ops); otherwise they are written into the dump as functions built but never recorded running (one op each, made at
the function's `def` line), so that `report` says which functions a clean-looking run did not record
(analysis/unrecorded.py)."""

from __future__ import annotations

import gc
from typing import Any

from ..writer.events import DebugEventsWriter
from . import frames


def jitted_before(plain_jit: Any) -> list[tuple[str, str, int]]:
    """(function name, file, def line) of each live function the user's own code wrapped with `plain_jit`."""
    kind = type(plain_jit(_probe))
    found: dict[tuple[str, int], str] = {}
    for obj in gc.get_objects():
        if type(obj) is not kind:
            continue
        code = getattr(getattr(obj, "__wrapped__", None), "__code__", None)
        if code is None or code is _probe.__code__ or not _users(code.co_filename):
            continue
        found.setdefault((code.co_filename, code.co_firstlineno), code.co_name)
    return sorted((name, path, line) for (path, line), name in found.items())


def _users(path: str) -> bool:
    """A file of the user's program: not JAX's, this package's or an installed library's (Keras, Flax...)."""
    return frames.kept(path) and not any(part in path for part in ("site-packages", "dist-packages", "<"))


def _probe() -> None:
    return None


def record(writer: DebugEventsWriter, functions: list[tuple[str, str, int]]) -> None:
    """Each function as a graph of one op made at its `def` line, never run (no execution, no trace)."""
    for i, (name, path, line) in enumerate(functions):
        graph_id, graph_name = f"jitted-before-{i}", f"jit_{name}"
        writer.graph(graph_id, graph_name)
        stack = writer.stack([(path, line, name)])
        writer.op(graph_id, graph_name, "jit", f"{name} (wrapped before enable_dump_debug_info)", [], [], stack)


def said(functions: list[tuple[str, str, int]], calls_seen: bool) -> str:
    """The stderr sentence naming them (the first five)."""
    if not functions:
        return "no function of yours was wrapped by jax.jit before this call"
    names = ", ".join(f"{name} ({path}:{line})" for name, path, line in functions[:5])
    more = f" and {len(functions) - 5} more" if len(functions) > 5 else ""
    if calls_seen:
        return (
            f"wrapped by jax.jit before this call, so recorded as calls only (outputs, call site; no graph, no "
            f"op inside): {names}{more}; call it before defining them to record their ops"
        )
    return f"NOT recorded, wrapped by jax.jit before this call: {names}{more}; call it before defining them"

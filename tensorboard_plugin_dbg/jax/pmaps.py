"""A top-level `jax.pmap` recorded as a jitted call of it (#41): JAX 0.10 runs a pmap as a `jit` of a `shard_map`,
so the recording `jit` around it records the body as any shard_map body (shard_bodies.py), in a graph named after
the function (`jit_<f>._fun_1.shard_map_2`). Left as JAX runs it (one eager execution, `_fun`, its body not
recorded) where a jit around it would change what runs: a static broadcasted or donated argument, or devices or a
backend chosen for it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax

_AS_JAX_RUNS_IT = ("static_broadcasted_argnums", "donate_argnums", "devices", "backend")


def install(record: Callable[[Any], Any]) -> Callable[[], None]:
    """`jax.pmap` replaced by one whose functions are passed through `record` (the recording jit); returns the undo."""
    original = jax.pmap

    @functools.wraps(original)
    def recording_pmap(fun: Any = None, *args: Any, **kwargs: Any) -> Any:
        if fun is None:
            return functools.partial(recording_pmap, *args, **kwargs)
        mapped = original(fun, *args, **kwargs)
        return mapped if any(kwargs.get(k) for k in _AS_JAX_RUNS_IT) else record(mapped)

    jax.pmap = recording_pmap

    def uninstall() -> None:
        jax.pmap = original

    return uninstall

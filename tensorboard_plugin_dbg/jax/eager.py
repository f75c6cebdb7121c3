"""Op-by-op (eager) JAX outside `jit` recorded as executions, as TensorFlow records its eager ops.

A primitive applied to concrete arrays goes through `EvalTrace.process_primitive` (JAX's eager interpreter); the
recorder wraps it: after the op ran, its outputs' summaries are computed on the host and the op is written as an
execution (its type, the caller's frames as its stack, its inputs linked to earlier outputs). Most `jax.numpy`
functions are small jitted programs: their calls reach that interpreter as one `jit` primitive named after the
function (`log`, `multiply`), recorded as one execution of that name. JAX's C++ dispatch skips Python for a jitted
function called again with the same shapes; while recording, that fast path is turned off (`_get_fastpath_data`
of jax._src.pjit answers None, and the caches filled before are cleared) so every call is seen — a function
wrapped by `jax.jit` before `enable_dump_debug_info` is then recorded too, as one execution per call (its outputs'
summaries and call site, no graph). The recording `jit`'s own program is skipped here (it writes its own records).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import jax
from jax._src import core, pjit

CALLS = frozenset({"closed_call", "core_call"})
RECORDED = "_instrumented"  # the recording jit's own program (recorder.RecordedJit), recorded there
_inside = threading.local()  # set while an op is being recorded: the recorder's own work is never recorded


@contextlib.contextmanager
def unrecorded() -> Iterator[None]:
    """Eager ops and jitted calls made in this block (this thread) are not recorded; a jitted function first called
    here keeps JAX's C++ fast path afterwards (bench/jax_overhead.py times plain `jit` beside the writer so)."""
    was = getattr(_inside, "active", False)
    _inside.active = True
    fast = _fast.get("original")
    if fast is not None:
        pjit._get_fastpath_data = fast
    try:
        yield
    finally:
        _inside.active = was
        if fast is not None:
            pjit._get_fastpath_data = _no_fastpath


def _no_fastpath(*args: Any, **kwargs: Any) -> None:
    return None


_fast: dict[str, Any] = {}  # "original": JAX's _get_fastpath_data while it is replaced


def install(record: Callable[[str, list[Any], list[Any]], None]) -> tuple[Callable[[], None], bool]:
    """Routes every eager primitive's (name, inputs, outputs) to `record`; returns the function that undoes it and
    whether calls of jitted functions are seen too (False where this JAX has no such dispatch to hook)."""
    original = core.EvalTrace.process_primitive

    def process_primitive(self: Any, primitive: Any, args: Any, params: Any, /) -> Any:
        out = original(self, primitive, args, params)
        name = primitive.name
        if name in ("jit", "pjit"):
            name = str(params.get("name", name))
        if name in CALLS or name == RECORDED or getattr(_inside, "active", False):
            return out
        _inside.active = True
        try:
            record(name, list(args), list(out) if primitive.multiple_results else [out])
        finally:
            _inside.active = False
        return out

    core.EvalTrace.process_primitive = process_primitive  # type: ignore[method-assign]
    try:  # JAX's own dispatch internals (pinned jax 0.10): another JAX may lack them, then jitted calls are not seen
        fastpath: Any = pjit._get_fastpath_data
        call_impl: Any = pjit._pjit_call_impl_python
    except AttributeError:
        fastpath = call_impl = None
    if fastpath is not None and call_impl is not None:

        def jitted_call(*args: Any, **params: Any) -> Any:
            result = call_impl(*args, **params)
            name = str(params.get("name", "jit"))
            if name != RECORDED and not getattr(_inside, "active", False):
                _inside.active = True
                try:
                    record(name, list(args), list(result[0]))
                finally:
                    _inside.active = False
            return result

        _fast["original"] = fastpath
        pjit._get_fastpath_data = _no_fastpath
        pjit._pjit_call_impl_python = jitted_call
        jax.clear_caches()

    def uninstall() -> None:
        core.EvalTrace.process_primitive = original  # type: ignore[method-assign]
        if fastpath is not None and call_impl is not None:
            pjit._get_fastpath_data, pjit._pjit_call_impl_python = fastpath, call_impl
            _fast.clear()

    return uninstall, fastpath is not None and call_impl is not None

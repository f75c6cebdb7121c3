"""The functions a run built but never recorded running: why a run with no NaN/∞ in its records is not "clean".

tfdbg2's debug ops have no XLA kernel, so with dumping on a function compiled by XLA (`tf.function(jit_compile=True)`,
Keras's `jit_compile=True`, or `"auto"` where a GPU is visible) fails to compile: the dump holds its graph (ops are
recorded as they are built) but neither an `execution` record of a call nor a graph execution trace of any op. A
program that died between building a function and its first call leaves the same. The dump itself does not say
which: the graph records carry no compile attribute (`_XlaMustCompile` lives on the function, not on its ops). What
the dump does hold is the user's source text, so a `jit_compile=True` (or `set_jit(True)`) on a line of the files
that built the function is quoted as the likely cause.

Each called function is judged, nested ones too (Keras's `one_step_on_data`, compiled by XLA, runs inside
`multi_step_on_iterator`, whose own few ops are traced). It counts as recorded when it or a function nested in it has
a trace; when an execution calls it by name (`__inference_<name>_<n>`: TF 2.21 leaves `Execution.graph_id` empty for
the functions GradientTape runs, so the name is the join); or when another graph of the same name was recorded
(tf.function traces a function anew when its first trace created variables, and that first graph never runs).
tf.data functions (their ops run inside the input pipeline), Keras's shape-inference `scratch_graph` and If/While
branches (a branch not taken rightly never runs) do not count either way, nor does a JAX graph nested in another (a
`cond` branch, a loop or shard_map body: part of its caller's program; the JAX writer writes a function wrapped
before it was enabled as a graph of its own).
"""

from __future__ import annotations

import dataclasses
import re

from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

__all__ = ["Unrecorded", "message", "unrecorded_functions"]

# Graphs that are never a step the user calls (see the module docstring).
_NOT_STEPS = re.compile(r"^(Dataset_|scratch_graph(_\d+)?$)")  # Keras numbers them under tf.distribute
# If/While/Case branch and body graphs (`cond_true_12`, `while_body_7`, `case_branch0_3`): a branch not taken is never
# run, rightly; only functions that are called count.
_BRANCH = re.compile(r"_(?:true|false|body|cond|branch\d+)_\d+$")
_CALLED = re.compile(r"^__(?:inference|forward|backward)_(.+?)_\d+$")
# A line that turns XLA on: `jit_compile=True`, `jit_compile="auto"`, `tf.config.optimizer.set_jit(True)`.
_XLA_LINE = re.compile(r"""jit_compile\s*=\s*(?:True|["']auto["'])|set_jit\s*\(\s*(?:True|["']autoclustering)""")
_MAX_LINES_SCANNED = 20_000  # per source file: a user's script, not a library


@dataclasses.dataclass(frozen=True)
class Unrecorded:
    """The outermost functions built but never recorded running, and the user line that turned XLA on, if any."""

    functions: list[str]  # their graph names, in the order the dump recorded them
    xla_line: tuple[str, int, str] | None  # (path, 1-based line, text)
    keras: bool  # a Keras trainer built them (whose jit_compile="auto" means XLA where a GPU is visible)
    jax: bool = False  # a JAX dump: they were wrapped by jax.jit before enable_dump_debug_info (jax/before.py)


def unrecorded_functions(run: RunQueries) -> Unrecorded | None:
    """The run's unrecorded functions (module docstring), None when every function it built was recorded."""
    entries = run.graph_entries()
    traced = _graphs_with_traces(run)
    called = {m.group(1) for t in run.exec_op_types if (m := _CALLED.match(t))}
    children: dict[str, list[str]] = {}
    for gid, _name, outer in entries:
        if outer:
            children.setdefault(outer, []).append(gid)
    names = {gid: name for gid, name, _ in entries}

    def recorded(gid: str) -> bool:
        return gid in traced or names.get(gid, "") in called or any(recorded(c) for c in children.get(gid, []))

    ran = {name for gid, name, _ in entries if recorded(gid)}
    jax = run.info()["framework"] == "jax"
    missing: list[str] = []
    for gid, name, outer in entries:
        if not name or _NOT_STEPS.match(name) or _BRANCH.search(name):
            continue  # the outermost context, tf.data/Keras internals, a branch that may rightly never run
        if jax and outer:  # a JAX nested graph runs in its caller's program (a branch not taken, a loop run 0 times)
            continue
        if name in ran or not run.graph_op_names(gid) or any(_nested_in(gid, m, entries) for m in missing):
            continue  # another trace of it ran (a first trace that created variables is traced anew), or no ops
        missing.append(gid)
    if not missing:
        return None
    frames = _user_frames(run, missing)
    return Unrecorded(
        functions=[names[g] for g in missing],
        xla_line=_xla_line(run, frames),
        keras=any("keras" in (f.get("path") or "") for f in _all_frames(run, missing)),
        jax=jax,
    )


def _nested_in(gid: str, outer_id: str, entries: list[tuple[str, str, str | None]]) -> bool:
    """Whether graph `gid` lies inside graph `outer_id` (one unrecorded function is named once, with its callers)."""
    outers = {g: o for g, _n, o in entries}
    seen: set[str] = set()
    current = outers.get(gid)
    while current and current not in seen:
        if current == outer_id:
            return True
        seen.add(current)
        current = outers.get(current)
    return False


def _graphs_with_traces(run: RunQueries) -> set[str]:
    _order, starts = run.kind_rows()
    counts = starts[1:] - starts[:-1]
    return {run.kind_info(k)[0] for k in range(len(counts)) if counts[k] > 0}


def _all_frames(run: RunQueries, graph_ids: list[str]) -> list[wire.StackFrame]:
    """The creation stack of each function's first op with one (outermost first)."""
    out: list[wire.StackFrame] = []
    for gid in graph_ids:
        for op_name in run.graph_op_names(gid):
            entry = run.op_entry(gid, op_name)
            if entry is not None and entry.stack_frame_ids:
                try:
                    out.extend(run.stack_frames(list(entry.stack_frame_ids))["frames"])
                except LookupError:
                    pass
                break
    return out


def _user_frames(run: RunQueries, graph_ids: list[str]) -> list[wire.StackFrame]:
    return [f for f in _all_frames(run, graph_ids) if f.get("is_user")]


def _xla_line(run: RunQueries, frames: list[wire.StackFrame]) -> tuple[str, int, str] | None:
    """The first line turning XLA on in the user files that built the functions (their own frames' files)."""
    seen: set[int] = set()
    for frame in frames:
        index = int(frame.get("source_index", -1))
        if index < 0 or index in seen or frame.get("path") is None:
            continue
        seen.add(index)
        try:
            lines = run.source_file(index, 1, _MAX_LINES_SCANNED)["lines"]
        except LookupError:
            continue
        for number, text in enumerate(lines, start=1):
            if _XLA_LINE.search(text.split("#", 1)[0]):
                return str(frame["path"]), number, text.strip()
    return None


def message(found: Unrecorded, n_traces: int, n_execs: int) -> str:
    """Why the run cannot be judged, and how to record it."""
    names = ", ".join(f"`{n}`" for n in found.functions[:5])
    more = f" and {len(found.functions) - 5:,} more" if len(found.functions) > 5 else ""
    was = "was" if len(found.functions) == 1 else "were"
    if found.jax:
        return (
            f"Cannot judge: jitted function {names}{more} {was} wrapped by jax.jit before enable_dump_debug_info, "
            f"so no call of it was recorded (the dump's {n_traces:,} graph execution traces and {n_execs:,} "
            "executions are of the functions wrapped after). To record it: call "
            "tensorboard_plugin_dbg.jax.enable_dump_debug_info before defining or importing the jitted step."
        )
    head = (
        f"Cannot judge: tf.function {names}{more} {was} built but never recorded running (no call, no graph "
        f"execution trace of it among the dump's {n_traces:,} graph execution traces and {n_execs:,} executions)."
    )
    if found.xla_line is not None:
        path, line, text = found.xla_line
        why = (
            f" The step was compiled by XLA ({path}:{line}: `{text}`) and not recorded: tfdbg2's debug ops have no "
            "XLA kernel, so TensorFlow could not compile it with dumping on."
        )
    elif found.keras:
        why = (
            " The step was most likely compiled by XLA and not recorded (Keras's jit_compile='auto' compiles with "
            "XLA where a GPU is visible; tfdbg2's debug ops have no XLA kernel), or the program died before its "
            "first call."
        )
    else:
        why = (
            " Either it was compiled by XLA (tfdbg2's debug ops have no XLA kernel, so it fails to compile with "
            "dumping on) or the program died before its first call."
        )
    fix = (
        " To record it: run the debug run with jit_compile=False (model.compile(..., jit_compile=False) or "
        "tf.function(..., jit_compile=False)), or keep XLA in training and use the NaN capsule (NanCapsule), "
        "which replays the bad step without XLA."
    )
    return head + why + fix

"""The notices of a run's status: problems (damage, failed passes, missing files) and explanations of empty
panels (circular buffer, NO_TENSOR mode, eager-only programs, still indexing)."""

from __future__ import annotations

from typing import Any


def status_notices(run) -> list[dict[str, Any]]:
    notices: list[dict[str, Any]] = []
    for (code, offset), reason in sorted(run.damages.copy().items())[:100]:
        notices.append({"code": "damaged_record", "severity": "error",
                        "message": f"Damaged record skipped ({reason}); every intact record around it was kept.",
                        "file": run.rel_path(run.files[code].path), "offset": int(offset)})
    for problem in list(run.problems):
        notices.append({k: v for k, v in problem.items() if k != "trace"})
    primary = run.file_sets[0].prefix
    for state in run.files:
        if state.missing and (state.suffix == "graph_execution_traces" or
                              state.path.rsplit("/", 1)[-1].startswith(primary + ".")):
            notices.append({"code": "missing_file", "severity": "warning",
                            "message": f"{state.suffix} file not found (yet).", "file": run.rel_path(state.path)})
        elif (not state.missing and not state.resyncing and (
                (state.needed > 0 and state.offset + state.needed > state.size)
                or 0 < state.size - state.offset < 12) and (  # a tail shorter than a header: needed is unknown
                state.suffix == "graph_execution_traces" or state.path.rsplit("/", 1)[-1].startswith(primary + "."))):
            # The file ends inside a record: its next record needs more bytes than the file has. (An unread file, or
            # one whose pass is between two read chunks, is not partial.) A live writer's last flush may end mid-record (read on the next pass); a file
            # that stays like this was cut short. Either way the user sees where reading stopped instead of a silent "still indexing".
            notices.append({"code": "partial_record", "severity": "info", "message": (
                f"{state.suffix} file ends inside a record ({state.size - state.offset} bytes of it so far): it is "
                "read when the writer completes it; if the file stays like this, it was truncated there."),
                "file": run.rel_path(state.path), "offset": int(state.offset)})
    sizes = {s.suffix: s.size for s in run.files if s.path.rsplit("/", 1)[-1].startswith(primary + ".")}
    n_exec, n_traces = len(run.execs), len(run.traces)
    if run.ops and n_exec == 0 and n_traces == 0 and not sizes.get("execution") \
            and not sizes.get("graph_execution_traces"):
        notices.append({"code": "circular_buffer", "severity": "info", "message": (
            "Graphs were recorded but no executions or graph executions yet. With a circular buffer "
            "(circular_buffer_size > 0, the default is 1000), TensorFlow writes them only when the program exits "
            "or flushes, and keeps only the last N; use circular_buffer_size=-1 to stream them live.")})
    modes = run.debug_modes()
    if modes and all(m == 1 for m in modes):
        notices.append({"code": "no_tensor_mode", "severity": "info", "message": (
            "The dump uses tensor_debug_mode=NO_TENSOR: it records which tensors were computed, not their values, "
            "so no non-finite value can be detected. Use FULL_HEALTH to find NaN/Inf.")})
    if n_exec and not run.graphs and n_traces == 0:
        notices.append({"code": "eager_only", "severity": "info", "message": (
            "Only eager executions were recorded: the program ran no tf.function, so there are no graphs.")})
    if n_exec == 0 and (sizes.get("metadata") or 0) > 0 and run.done:
        notices.append({"code": "no_executions", "severity": "info", "message": "No executions recorded."})
    if n_traces == 0 and n_exec > 0 and run.done:
        notices.append({"code": "no_graph_executions", "severity": "info",
                        "message": "No graph executions recorded."})
    if not run.done:
        notices.append({"code": "still_indexing", "severity": "info",
                        "message": "Still reading the dump: counts and lists are partial."})
    return notices

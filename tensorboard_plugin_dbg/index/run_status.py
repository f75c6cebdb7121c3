"""The notices of a run's status: problems (damage, failed passes, unreadable or missing files) and explanations of
empty panels (circular buffer, NO_TENSOR mode, eager-only programs, still indexing); and the bookkeeping of the
read failures behind some of them (RunIndex.refresh calls read_file_noting_failure for each file)."""

from __future__ import annotations

import errno
import os
import stat
import traceback
from typing import Protocol

from ..reader import storage
from ..wire import types as wire
from .state import FileState, Problem, RunState, notice_of

MAX_PROBLEMS = 20  # files with a standing read failure listed in the status (one notice per file)


class _Reading(Protocol):
    """What the failure bookkeeping needs of a run being read (ingest.RunIngestion, which imports this module)."""

    name: str
    problems: list[Problem]

    def rel_path(self, path: str) -> str: ...

    def read_file(self, code: int, state: FileState) -> None: ...

    def refresh(self) -> bool: ...


def stat_file(state: FileState) -> bool:
    """Sets state.size and state.missing from the file on disk; False when there is no file (yet). Raises OSError when
    something else is in its place: open() fails on a directory and blocks on a FIFO until a writer comes. A remote
    object's size comes from the refresh's listing (no request)."""
    if storage.is_remote(state.path):
        try:
            state.size = storage.remote_size(state.path)
        except FileNotFoundError:
            state.missing = True
            return False
        state.missing = False
        return True
    try:
        st = os.stat(state.path)
    except FileNotFoundError:  # (a dangling link too) other errors, e.g. a link loop, are the file's notice
        state.missing = True
        return False
    state.missing = False
    if not stat.S_ISREG(st.st_mode):
        raise OSError(
            errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL,
            "not a regular file (a FIFO, socket or device)",
            state.path,
        )
    state.size = st.st_size
    return True


def read_file_noting_failure(run: _Reading, code: int, state: FileState) -> bool:
    """run.read_file(code, state); False when it failed, the failure then being the file's notice. Never raises:
    one bad file must not stop the pass (the run's other files are still read), nor one bad pass the next."""
    try:
        run.read_file(code, state)
    except FileNotFoundError:
        state.missing = True  # deleted between its stat and its read: the missing_file notice says so
    except Exception as exc:  # noqa: BLE001
        record_failure(run, state, exc)
        return False
    clear_failure(run, state)
    return True


def record_failure(run: _Reading, state: FileState, exc: BaseException) -> None:
    """Makes `exc`, raised while reading `state`'s file, that file's one standing problem in the run's status
    (replacing its previous one: a cause that stays is one notice, not one per pass).

    An OS error with an errno (permission denied, a directory or FIFO in the file's place, an I/O error) is
    `unreadable_file`: the file, not the reader, is at fault, and the pass goes on with the run's other files.
    Anything else is `refresh_failed`: the reader raised, which is a bug or an injected fault."""
    rel, name = run.rel_path(state.path), os.path.basename(state.path)
    if isinstance(exc, OSError) and exc.errno is not None:
        why = {
            errno.EACCES: "permission denied",
            errno.EPERM: "operation not permitted",
            errno.EISDIR: "it is a directory, not a file",
        }.get(exc.errno, exc.strerror or repr(exc))
        notice: Problem = {
            "code": "unreadable_file",
            "severity": "error",
            "message": (
                f"Cannot read {name}: {why}. The run's other files are still read; this one is tried again on every "
                "refresh."
            ),
            "file": rel,
        }
        if state.offset:  # it failed part way: where reading stopped (before anything was read there is no
            notice["offset"] = int(state.offset)  # offset: "@ byte 0" would point at the file's first record)
    else:  # the reader failed part way: where it was reading (the start of the chunk it was decoding) locates it
        notice = {
            "code": "refresh_failed",
            "severity": "error",
            "file": rel,
            "offset": int(state.offset),
            "message": f"reading {name} from byte {int(state.offset):,} failed: {exc!r}",
        }
    notice["trace"] = traceback.format_exc(limit=3)
    run.problems = [p for p in run.problems if p.get("file") != rel][-(MAX_PROBLEMS - 1) :] + [notice]


def clear_failure(run: _Reading, state: FileState) -> None:
    """The file was read (or is gone) in this pass: its old failure is no longer the run's status."""
    if run.problems:
        rel = run.rel_path(state.path)
        run.problems = [p for p in run.problems if p.get("file") != rel]


def status_notices(run: RunState) -> list[wire.Notice]:
    """The notices of the run's status: its problems first (damaged records, standing read failures, files missing,
    shrunk or ending inside a record), then the explanations of empty panels."""
    return [*_damage_notices(run), *_problem_notices(run), *_file_notices(run), *_empty_panel_notices(run)]


def _damage_notices(run: RunState) -> list[wire.Notice]:
    return [
        {
            "code": "damaged_record",
            "severity": "error",
            "message": f"Damaged record skipped in {run.files[code].suffix} at byte {int(offset)} "
            f"({reason}); every intact record around it was kept.",
            "file": run.rel_path(run.files[code].path),
            "offset": int(offset),
        }
        for (code, offset), reason in sorted(run.damages.copy().items())[:100]
    ]


def _problem_notices(run: RunState) -> list[wire.Notice]:
    # the standing read failures (record_failure), without the traceback kept for the logs
    return [notice_of(problem) for problem in list(run.problems)]


def _read_files(run: RunState) -> list[FileState]:
    """The files the reader reads: traces come from every file set, everything else from the earliest one only."""
    primary = run.file_sets[0].prefix
    return [
        s
        for s in run.files
        if s.suffix == "graph_execution_traces" or os.path.basename(s.path).startswith(primary + ".")
    ]


def _file_notices(run: RunState) -> list[wire.Notice]:
    notices: list[wire.Notice] = []
    for state in _read_files(run):
        if state.missing:
            notices.append(_missing_file(run, state))
        elif state.offset > state.size:
            notices.append(_shrunk_file(run, state))
        elif _ends_inside_a_record(state):
            notices.append(_partial_record(run, state))
    return notices


def _missing_file(run: RunState, state: FileState) -> wire.Notice:
    name = os.path.basename(state.path)
    return {
        "code": "missing_file",
        "severity": "warning",
        "file": run.rel_path(state.path),
        "message": f"{state.suffix} file not found (yet): {name}."
        if not state.offset
        else (
            f"{name} was deleted after {state.offset} bytes of it were read: what was read stays "
            "listed, but its details cannot be read back until the file returns."
        ),
    }


def _shrunk_file(run: RunState, state: FileState) -> wire.Notice:
    # Shrank below what was read (cut, or replaced by a shorter file): the rows already served stay; they point
    # into the lost part, so reading their details back fails until the file grows back.
    return {
        "code": "unreadable_file",
        "severity": "warning",
        "file": run.rel_path(state.path),
        "offset": int(state.size),
        "message": (
            f"{os.path.basename(state.path)} shrank to {state.size} bytes after {state.offset} bytes of it were read "
            "(truncated or replaced): what was read stays listed, but the details of records "
            f"past byte {state.size} cannot be read back."
        ),
    }


def _ends_inside_a_record(state: FileState) -> bool:
    """The file ends inside a record: its next record needs more bytes than the file has (a tail shorter than a
    header: needed is unknown). An unread file, or one whose pass is between two read chunks, is not partial."""
    return not state.resyncing and (
        (state.needed > 0 and state.offset + state.needed > state.size) or 0 < state.size - state.offset < 12
    )


def _partial_record(run: RunState, state: FileState) -> wire.Notice:
    # A live writer's last flush may end mid-record (read on the next pass); a file that stays like this was cut
    # short. Either way the user sees where reading stopped instead of a silent "still indexing".
    return {
        "code": "partial_record",
        "severity": "info",
        "message": (
            f"{state.suffix} file ends inside a record ({state.size - state.offset} bytes of it so far): "
            "it is read when the writer completes it; if the file stays like this, it was truncated there."
        ),
        "file": run.rel_path(state.path),
        "offset": int(state.offset),
    }


def _empty_panel_notices(run: RunState) -> list[wire.Notice]:
    """Why a panel is empty. These must not blame the program when a file could not be read: `unread` holds the
    suffixes of the files missing or failing."""
    failing = {p.get("file") for p in run.problems}
    unread = {s.suffix for s in run.files if s.missing or run.rel_path(s.path) in failing}
    primary = run.file_sets[0].prefix
    sizes = {s.suffix: s.size for s in run.files if s.path.rsplit("/", 1)[-1].startswith(primary + ".")}
    n_exec, n_traces = len(run.execs), len(run.traces)
    notices = [
        _circular_buffer(run, n_exec, n_traces, sizes, unread),
        _no_tensor_mode(run),
        _eager_only(run, n_exec, n_traces, unread),
        _no_executions(run, n_exec, sizes, unread),
        _no_graph_executions(run, n_exec, n_traces, unread),
        _still_indexing(run),
    ]
    return [n for n in notices if n is not None]


def _circular_buffer(
    run: RunState, n_exec: int, n_traces: int, sizes: dict[str, int], unread: set[str]
) -> wire.Notice | None:
    if not (
        run.ops
        and n_exec == 0
        and n_traces == 0
        and not sizes.get("execution")
        and not sizes.get("graph_execution_traces")
        and not {"execution", "graph_execution_traces"} & unread
    ):
        return None
    return {
        "code": "circular_buffer",
        "severity": "info",
        "message": (
            "Graphs were recorded but no executions or graph executions yet. With a circular buffer "
            "(circular_buffer_size > 0, the default is 1000), TensorFlow writes them only when the program "
            "exits or flushes, and keeps only the last N; use circular_buffer_size=-1 to stream them live."
        ),
    }


def _no_tensor_mode(run: RunState) -> wire.Notice | None:
    modes = run.debug_modes()
    if not (modes and all(m == 1 for m in modes)):
        return None
    return {
        "code": "no_tensor_mode",
        "severity": "info",
        "message": (
            "The dump uses tensor_debug_mode=NO_TENSOR: it records which tensors were computed, not their "
            "values, so no non-finite value can be detected. Use FULL_HEALTH to find NaN/Inf."
        ),
    }


def _eager_only(run: RunState, n_exec: int, n_traces: int, unread: set[str]) -> wire.Notice | None:
    if not (n_exec and not run.graphs and n_traces == 0 and not {"graphs", "graph_execution_traces"} & unread):
        return None
    return {
        "code": "eager_only",
        "severity": "info",
        "message": "Only eager executions were recorded: the program ran no tf.function, so there are no graphs.",
    }


def _no_executions(run: RunState, n_exec: int, sizes: dict[str, int], unread: set[str]) -> wire.Notice | None:
    if n_exec == 0 and (sizes.get("metadata") or 0) > 0 and run.done and "execution" not in unread:
        return {"code": "no_executions", "severity": "info", "message": "No executions recorded."}
    return None


def _no_graph_executions(run: RunState, n_exec: int, n_traces: int, unread: set[str]) -> wire.Notice | None:
    if n_traces == 0 and n_exec > 0 and run.done and "graph_execution_traces" not in unread:
        return {"code": "no_graph_executions", "severity": "info", "message": "No graph executions recorded."}
    return None


def _still_indexing(run: RunState) -> wire.Notice | None:
    if run.done:
        return None
    return {
        "code": "still_indexing",
        "severity": "info",
        "message": "Still reading the dump: counts and lists are partial.",
    }


def refresh_run(run: _Reading) -> None:
    """run.refresh() for the catalog's pass. RunIndex.refresh records its files' failures itself; anything raised
    outside them becomes the run's one file-less `refresh_failed` notice (until a pass succeeds), so one run's
    failure neither skips the other runs nor ends the refresher thread."""
    try:
        run.refresh()
    except Exception as exc:  # noqa: BLE001
        run.problems = [p for p in run.problems if p.get("file")] + [
            {
                "code": "refresh_failed",
                "severity": "error",
                "message": f"refreshing run {run.name} failed: {exc!r}",
                "trace": traceback.format_exc(limit=3),
            }
        ]
        return
    if any(not p.get("file") for p in run.problems):
        run.problems = [p for p in run.problems if p.get("file")]

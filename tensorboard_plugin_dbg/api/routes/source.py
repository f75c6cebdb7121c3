"""The source views: the dump's source files, one file's lines, the ops each line created, and stack frames."""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis import source_lines
from tensorboard_plugin_dbg.api.params import PAGE_CAP, Param, Params
from tensorboard_plugin_dbg.api.routes.shared import BEGIN, END, INDEX, RUN, clamped
from tensorboard_plugin_dbg.api.spec import RouteSpec
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

LINES = (  # a range of one file's lines: source_file's and source_line_counts'
    Param("begin_line", "int", "First line (1-based).", minimum=1),
    Param("end_line", "int", "Last line (inclusive); must be >= begin_line.", minimum=1),
)


def source_files(run: RunQueries, p: Params) -> wire.SourceFilesResponse:
    return {"run": run.name, **run.source_files()}


def source_file(run: RunQueries, p: Params) -> wire.SourceFileResponse:
    return {"run": run.name, **run.source_file(p["index"], begin_line=p["begin_line"], end_line=p["end_line"])}


def source_line_counts(run: RunQueries, p: Params) -> wire.SourceLineCountsResponse:
    return {"run": run.name, **source_lines.line_counts(run, p["index"], p["begin_line"], p["end_line"])}


def line_ops(run: RunQueries, p: Params) -> wire.LineOpsResponse:
    return {"run": run.name, **clamped(source_lines.line_ops(run, p["index"], p["line"], p["begin"], p["end"]))}


def stack_frames(run: RunQueries, p: Params) -> wire.StackFramesResponse:
    return {"run": run.name, **run.stack_frames(p["ids"])}


ROUTES: tuple[RouteSpec, ...] = (
    RouteSpec("source_files", "Every source file in the dump.", (RUN,), source_files, "SourceFilesResponse"),
    RouteSpec(
        "source_file",
        "Lines of one source file (1-based, inclusive, clamped to the file; default: all).",
        (RUN, INDEX, *LINES),
        source_file,
        "SourceFileResponse",
    ),
    RouteSpec(
        "source_line_counts",
        "Per line of one source file, the graph ops created there (each op at the innermost frame of its creation "
        "stack in this file): how many, how many directly (the op's innermost user frame), how many non-finite.",
        (RUN, INDEX, *LINES),
        source_line_counts,
        "SourceLineCountsResponse",
    ),
    RouteSpec(
        "line_ops",
        "The graph ops one source line created, non-finite ones first, then direct ones, each with its first "
        "non-finite trace; `total` counts them all.",
        (RUN, INDEX, Param("line", "int", "Line (1-based).", required=True, minimum=1), BEGIN, END),
        line_ops,
        "LineOpsResponse",
        paged=True,
    ),
    RouteSpec(
        "stack_frames",
        "Stack frames by id, in request order.",
        (
            RUN,
            Param("ids", "id_list", f"Comma-separated frame ids, at most {PAGE_CAP}.", required=True, maximum=PAGE_CAP),
        ),
        stack_frames,
        "StackFramesResponse",
    ),
)

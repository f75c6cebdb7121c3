"""The one route table of the JSON API (`ROUTES`): it drives dispatch (`api/app.py`), parameter validation
(`api/params.py`) and the OpenAPI document (`api/openapi.py`), so the three cannot disagree.

Every route is GET `/data/plugin/dbg/<name>`. A route that declares a `run` parameter gets the resolved run
(`protocol.RunQueries`, unknown name -> 404); the others get the catalog. Handlers add the `run` field the index
leaves out and clamp page bounds to the total; everything else is the index's answer as is.
"""

from __future__ import annotations

from typing import Any

from tensorboard_plugin_dbg.analysis import alerts as alert_analysis
from tensorboard_plugin_dbg.analysis import health_map as health_map_analysis
from tensorboard_plugin_dbg.analysis import (
    neighborhood,
    report_text,
    run_verdict,
    source_lines,
    tensor_slices,
    tensor_stats,
    tensor_values,
    timeline_marks,
)
from tensorboard_plugin_dbg.analysis.rules import config as rule_config
from tensorboard_plugin_dbg.analysis.rules import mutes as mute_rules
from tensorboard_plugin_dbg.api import errors
from tensorboard_plugin_dbg.api import openapi as openapi_document
from tensorboard_plugin_dbg.api.params import PAGE_CAP, Param, clamp_page
from tensorboard_plugin_dbg.api.spec import Binary, RouteSpec
from tensorboard_plugin_dbg.index.protocol import Catalog, RunQueries
from tensorboard_plugin_dbg.index.tensor_queries import SOURCES
from tensorboard_plugin_dbg.reader import tensor_content

ALERT_TYPES = rule_config.ALERT_TYPES  # the NaN/∞ type (InfNanAlert) and the rules'
ALERT_ROLES = ("producer",)
# FULL_TENSOR values: at most this many elements per response (a 1,000-row page of numbers is a few KiB; 100 k
# elements is ~1-2 MB of JSON, the most a panel can show at once anyway).
MAX_TENSOR_ELEMENTS = 100_000
DEFAULT_TENSOR_ELEMENTS = 1000
NPY = "application/octet-stream"

RUN = Param("run", "str", "Run name, as listed by `runs` (RunInfo.name).", required=True)
BEGIN = Param("begin", "int", "First row of the page (0-based).", required=True)
END = Param("end", "int", f"One past the last row; end - begin <= {PAGE_CAP}; clamped to the total.", required=True)
INDEX = Param("index", "int", "0-based position in the list (>= 0; -1 is an error, not the last item).", required=True)
MAX_ELEMENTS = Param(
    "max_elements",
    "int",
    "FULL_TENSOR values: most elements to return.",
    default=DEFAULT_TENSOR_ELEMENTS,
    minimum=0,
    maximum=MAX_TENSOR_ELEMENTS,
)
MUTES = Param(
    "mutes",
    "mutes",
    "Alerts to hide: a JSON array of objects {rule, op_type, op_name, graph_id, reason}: all given fields must "
    "match (op_name: a glob over the whole name, or `re:` + a regular expression searched in it); any mute hides. "
    f"At most {mute_rules.MAX_MUTES}. Applied to the list, the totals and the root cause.",
)


def _threshold(name: str) -> Param:
    default = getattr(rule_config.DEFAULTS, name)
    kind = "float" if isinstance(default, float) else "int"
    low = 1 if name != "vanish_floor" else 0
    return Param(
        name,
        kind,
        f"Rule threshold, {rule_config.THRESHOLD_DOCS[name]} (default {default}).",
        default=default,
        minimum=low,
        maximum=1_000_000,
    )


THRESHOLDS = tuple(_threshold(name) for name in rule_config.THRESHOLD_DOCS)

SOURCE = Param("source", "enum", "graph: a graph execution trace; eager: an execution.", required=True, choices=SOURCES)
OUTPUT = Param("output", "int", "Output slot (eager: default 0; graph: the trace's own slot, default it).")
TENSOR = (RUN, SOURCE, Param("index", "int", "graph_executions or executions index.", required=True), OUTPUT)
LINES = (  # source_line_counts' (as source_file's)
    Param("begin_line", "int", "First line (1-based).", minimum=1),
    Param("end_line", "int", "Last line (inclusive); must be >= begin_line.", minimum=1),
)


# Exact names from the `devices` route; an unknown one matches nothing (200, empty), a malformed one is a 400.
DEVICE = Param(
    "device",
    "str",
    "Only traces on this device (its full name, e.g. /job:localhost/replica:0/task:0/device:CPU:1).",
    pattern=r"^/[!-~]+$",
    shape="a device name: '/' then printable ASCII, no spaces",
)
HOST = Param(
    "host",
    "str",
    "Only traces recorded on this host (its file set's host name).",
    pattern=r"^[^\x00-\x20\x7f-\x9f]+$",
    shape="a host name: no spaces or control characters",
)


def _with_run(run: RunQueries, answer: dict[str, Any]) -> dict[str, Any]:
    # The run name first, as wire.ts lists it; the index's answer does not carry it.
    return {"run": run.name, **answer}


def _page(run: RunQueries, answer: dict[str, Any]) -> dict[str, Any]:
    clamp_page(answer, int(answer["total"]))
    return _with_run(run, answer)


def runs(catalog: Catalog, p: dict[str, Any]) -> dict[str, Any]:
    # Each run's summary comes from its cached root cause only (run_verdict.summary): this route is polled.
    runs = [{**r.info(), "summary": run_verdict.summary(r)} for r in catalog.runs()]
    return {"logdir": catalog.logdir, "runs": runs, "notices": catalog.notices()}


def alerts(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    producers_only = p["role"] == "producer"
    thresholds = rule_config.thresholds_from(p)
    answer = alert_analysis.alerts(run, p["begin"], p["end"], p["type"], producers_only, p["mutes"] or (), thresholds)
    return _page(run, answer)


def executions(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    return _page(run, run.executions(p["begin"], p["end"]))


def execution(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    return run.execution(p["index"], max_elements=p["max_elements"])


def graph_executions(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    return _page(
        run,
        run.graph_executions(
            p["begin"],
            p["end"],
            op_type=p["op_type"],
            op_name=p["op_name"],
            graph_id=p["graph_id"],
            only_nonfinite=p["only_nonfinite"],
            device=p["device"],
            host=p["host"],
            call=p["call"],
        ),
    )


def timeline_marks_route(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    return _with_run(run, timeline_marks.marks(run, p["bins"], p["mutes"] or ()))


def devices(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    return _with_run(run, run.device_counts())


def graph_execution(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    return run.graph_execution(p["index"], begin=p["begin"], max_elements=p["max_elements"])


def graph(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    return _with_run(run, run.graph(p["graph_id"]))


def op(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    return _with_run(run, run.op(p["graph_id"], p["op_name"], near=p["near"]))


def graph_neighborhood(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    answer = neighborhood.neighborhood(run, p["graph_id"], p["op_name"], p["hops"], p["direction"], p["near"])
    return _with_run(run, answer)


def source_files(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    return _with_run(run, run.source_files())


def source_file(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    return _with_run(run, run.source_file(p["index"], begin_line=p["begin_line"], end_line=p["end_line"]))


def source_line_counts(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    return _with_run(run, source_lines.line_counts(run, p["index"], p["begin_line"], p["end_line"]))


def line_ops(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    return _page(run, source_lines.line_ops(run, p["index"], p["line"], p["begin"], p["end"]))


def stack_frames(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    return _with_run(run, run.stack_frames(p["ids"]))


def root_cause(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    # The card's "copy as text" is the report's section for this run: one formatter (analysis/report_text.py).
    result = report_text.run_result(run, p["mutes"] or ())
    answer = {k: v for k, v in result.items() if k not in ("run", "notices")}
    return _with_run(run, {**answer, "report_text": report_text.run_section(result)})


def health_map(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    # a page holds at most MAX_ROWS ops (each with up to `columns` cells): clamped, as the description says
    end = min(p["end"], p["begin"] + health_map_analysis.MAX_ROWS)
    answer = health_map_analysis.health_map(
        run, p["begin"], end, p["columns"], p["step_begin"], p["step_end"], p["graph_id"], p["op_name"]
    )
    return _page(run, answer)


def tensor(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    try:
        answer = tensor_values.tensor(run, p["source"], p["index"], p["output"], p["slice"], p["bins"])
    except tensor_slices.SliceError as exc:
        raise errors.ApiError(errors.PAGE_TOO_LARGE if exc.too_large else errors.BAD_PARAMETER, str(exc)) from exc
    return _with_run(run, answer)


def tensor_npy(run: RunQueries, p: dict[str, Any]) -> Binary:
    loc, filename = tensor_values.npy(run, p["source"], p["index"], p["output"])
    return Binary(
        tensor_values.npy_stream(loc),
        tensor_content.npy_bytes(loc),
        filename,
        NPY,
        {"X-Dbg-Dtype": loc.dtype},
    )


def tensor_inputs(run: RunQueries, p: dict[str, Any]) -> dict[str, Any]:
    return _with_run(run, tensor_values.inputs(run, p["source"], p["index"]))


def openapi(catalog: Catalog, p: dict[str, Any]) -> dict[str, Any]:
    return openapi_document.document(ROUTES)


ROUTES: tuple[RouteSpec, ...] = (
    RouteSpec("runs", "Every run under the logdir with its counts and indexing status.", (), runs, "RunsResponse"),
    RouteSpec(
        "alerts",
        "Alerts: NaN/∞ in wall-time order, then the rules' findings (retracing, shape/dtype change, all-zero, dead "
        "ReLU, value explosion/vanishing); totals overall and per type after the mutes (no silent cap).",
        (
            RUN,
            BEGIN,
            END,
            Param("type", "enum", "Only alerts of this type.", choices=ALERT_TYPES),
            Param(
                "role",
                "enum",
                "Only alerts whose tensor was made non-finite there (producers, unknowns).",
                choices=ALERT_ROLES,
            ),
            MUTES,
            *THRESHOLDS,
        ),
        alerts,
        "AlertsResponse",
        paged=True,
    ),
    RouteSpec(
        "executions",
        "Eager executions (ops and tf.function calls), in order.",
        (RUN, BEGIN, END),
        executions,
        "ExecutionsResponse",
        paged=True,
    ),
    RouteSpec(
        "execution",
        "One eager execution with its outputs' health and FULL_TENSOR values.",
        (RUN, INDEX, MAX_ELEMENTS),
        execution,
        "ExecutionDetail",
    ),
    RouteSpec(
        "graph_executions",
        "Graph execution traces, filtered; `total` counts the rows matching the filters.",
        (
            RUN,
            BEGIN,
            END,
            Param("op_type", "str", "Op type, case-insensitive (whole name)."),
            Param("op_name", "str", "Case-insensitive substring of the op name."),
            Param("graph_id", "str", "Exact graph id (the immediately enclosing graph)."),
            Param("only_nonfinite", "bool", "Only traces whose tensor holds -inf, +inf or NaN.", default=False),
            DEVICE,
            HOST,
            Param(
                "call",
                "int",
                "Only the traces of this tf.function call (an eager execution index): those written between the "
                "previous execution's record and this one's. 404 for an eager op.",
                minimum=0,
            ),
        ),
        graph_executions,
        "GraphExecutionsResponse",
        paged=True,
    ),
    RouteSpec(
        "timeline_marks",
        "The timeline minimap: the run's executions in equal bins, each with its number of NaN/∞ alerts (after the "
        "mutes; a graph trace's alert counts at the tf.function call that ran it) and the alert-list index of its "
        "first one.",
        (
            RUN,
            Param(
                "bins",
                "int",
                "Most bins (fewer when the run has fewer executions).",
                default=timeline_marks.DEFAULT_BINS,
                minimum=1,
                maximum=timeline_marks.MAX_BINS,
            ),
            MUTES,
        ),
        timeline_marks_route,
        "TimelineMarksResponse",
    ),
    RouteSpec(
        "devices",
        "Where ops ran: each (device, host) with its graph execution traces and eager executions (the facets).",
        (RUN,),
        devices,
        "DevicesResponse",
    ),
    RouteSpec(
        "graph_execution",
        "One graph execution trace; a FULL_TENSOR value is sliced by flat element.",
        (RUN, INDEX, Param("begin", "int", "FULL_TENSOR values: first flat element.", default=0), MAX_ELEMENTS),
        graph_execution,
        "GraphExecutionDetail",
    ),
    RouteSpec(
        "graph",
        "One graph: its name, nesting and op count.",
        (RUN, Param("graph_id", "str", "Graph id.", required=True)),
        graph,
        "GraphInfo",
    ),
    RouteSpec(
        "op",
        "One graph op with its inputs, consumers and trace indices.",
        (
            RUN,
            Param("graph_id", "str", "Id of the graph holding the op.", required=True),
            Param("op_name", "str", "Op name (exact).", required=True),
            Param("near", "int", "List the trace indices nearest this graph_executions index."),
        ),
        op,
        "OpInfo",
    ),
    RouteSpec(
        "graph_neighborhood",
        f"The ops within `hops` data-edge hops of one op (at most {neighborhood.NODE_CAP}), across function "
        "boundaries, each with its health at the trace nearest `near`.",
        (
            RUN,
            Param("graph_id", "str", "Id of the graph holding the op.", required=True),
            Param("op_name", "str", "Op name (exact).", required=True),
            Param("hops", "int", "How far to walk.", default=2, minimum=1, maximum=neighborhood.MAX_HOPS),
            Param("direction", "enum", "Upstream, downstream or both.", default="both", choices=("up", "down", "both")),
            Param("near", "int", "The focused graph_executions index: health is read at each op's trace of that step."),
        ),
        graph_neighborhood,
        "NeighborhoodResponse",
    ),
    RouteSpec("source_files", "Every source file in the dump.", (RUN,), source_files, "SourceFilesResponse"),
    RouteSpec(
        "source_file",
        "Lines of one source file (1-based, inclusive, clamped to the file; default: all).",
        (
            RUN,
            INDEX,
            Param("begin_line", "int", "First line (1-based).", minimum=1),
            Param("end_line", "int", "Last line (inclusive); must be >= begin_line.", minimum=1),
        ),
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
    RouteSpec(
        "root_cause",
        "The first producer of a non-finite tensor (not hidden by a mute), its inputs and the user's line.",
        (RUN, MUTES),
        root_cause,
        "RootCauseResponse",
    ),
    RouteSpec(
        "health_map",
        "Health over time: ops (rows, NaN/∞ ones first) x steps (the k-th trace of each op), binned; per cell the "
        "non-finite count, zero fraction, shape/dtype change and the trace it stands for.",
        (
            RUN,
            BEGIN,
            Param(
                "end",
                "int",
                f"One past the last row; at most {health_map_analysis.MAX_ROWS} rows are returned (clamped).",
                required=True,
            ),
            Param(
                "columns",
                "int",
                "Most step bins.",
                default=health_map_analysis.DEFAULT_COLUMNS,
                minimum=1,
                maximum=health_map_analysis.MAX_COLUMNS,
            ),
            Param("step_begin", "int", "First step (0-based).", default=0),
            Param("step_end", "int", "One past the last step (default: the last step)."),
            Param("graph_id", "str", "With op_name: only this graph's op."),
            Param("op_name", "str", "Only this op's output slots (exact name)."),
        ),
        health_map,
        "HealthMapResponse",
        paged=True,
    ),
    RouteSpec(
        "tensor",
        "One debug tensor: dtype, shape, whole-tensor stats, histogram, non-finite positions, and a slice of values "
        "(FULL_TENSOR; other modes: what they carry, and how to record values).",
        (
            *TENSOR,
            Param(
                "slice",
                "str",
                "numpy basic slice, e.g. `3,:,0:8`, `-1,...`, `::-2` (ints, negative ints, start:stop:step, one "
                f"`...`); at most {tensor_slices.MAX_SLICE_ELEMENTS} elements (else 400 page_too_large). "
                "Absent: no values, the summary only; empty: not allowed (give `...` for everything).",
            ),
            Param(
                "bins",
                "int",
                "Histogram bins.",
                default=tensor_stats.DEFAULT_BINS,
                minimum=1,
                maximum=tensor_stats.MAX_BINS,
            ),
        ),
        tensor,
        "TensorResponse",
    ),
    RouteSpec(
        "tensor.npy",
        "A FULL_TENSOR value as a .npy file, bit-exact in its stored dtype (bfloat16: its raw 16-bit words, "
        "dtype <u2; the X-Dbg-Dtype header and the file name say bfloat16; strings: fixed-width bytes |S<n>).",
        TENSOR,
        tensor_npy,
        None,
        content_type=NPY,
    ),
    RouteSpec(
        "tensor_inputs",
        "The op's data inputs of a tensor, each with the latest recorded tensor of it before the op ran.",
        TENSOR[:3],
        tensor_inputs,
        "TensorInputsResponse",
    ),
    RouteSpec("openapi.json", "This API as an OpenAPI 3.1 document.", (), openapi, None, uses_catalog=False),
)

ROUTES_BY_NAME: dict[str, RouteSpec] = {r.name: r for r in ROUTES}

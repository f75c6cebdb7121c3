"""The paged lists and their items: alerts (with the rules' thresholds), eager executions, graph execution traces
(with their filters, one `TraceFilter`), and the devices the traces can be filtered by."""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis import alerts as alert_analysis
from tensorboard_plugin_dbg.analysis.rules import config as rule_config
from tensorboard_plugin_dbg.api.params import Param, Params
from tensorboard_plugin_dbg.api.routes.shared import BEGIN, END, INDEX, MUTES, RUN, clamped
from tensorboard_plugin_dbg.api.spec import RouteSpec
from tensorboard_plugin_dbg.index.protocol import RunQueries, TraceFilter
from tensorboard_plugin_dbg.wire import types as wire

ALERT_TYPES = rule_config.ALERT_TYPES  # the NaN/∞ type (InfNanAlert) and the rules'
ALERT_ROLES = ("producer",)
# FULL_TENSOR values: at most this many elements per response (a 1,000-row page of numbers is a few KiB; 100 k
# elements is ~1-2 MB of JSON, the most a panel can show at once anyway).
MAX_TENSOR_ELEMENTS = 100_000
DEFAULT_TENSOR_ELEMENTS = 1000

MAX_ELEMENTS = Param(
    "max_elements",
    "int",
    "FULL_TENSOR values: most elements to return.",
    default=DEFAULT_TENSOR_ELEMENTS,
    minimum=0,
    maximum=MAX_TENSOR_ELEMENTS,
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


def alerts(run: RunQueries, p: Params) -> wire.AlertsResponse:
    producers_only = p["role"] == "producer"
    thresholds = rule_config.thresholds_from(p)
    answer = alert_analysis.alerts(run, p["begin"], p["end"], p["type"], producers_only, p["mutes"] or (), thresholds)
    return {"run": run.name, **clamped(answer)}


def executions(run: RunQueries, p: Params) -> wire.ExecutionsResponse:
    return {"run": run.name, **clamped(run.executions(p["begin"], p["end"]))}


def execution(run: RunQueries, p: Params) -> wire.ExecutionDetail:
    return run.execution(p["index"], max_elements=p["max_elements"])


def trace_filter(p: Params) -> TraceFilter:
    """Graph Execution's list filters as the route's parameters give them (also `compare_rows`'s)."""
    return TraceFilter(
        op_type=p["op_type"],
        op_name=p["op_name"],
        graph_id=p["graph_id"],
        only_nonfinite=p["only_nonfinite"],
        device=p["device"],
        host=p["host"],
    )


def graph_executions(run: RunQueries, p: Params) -> wire.GraphExecutionsResponse:
    filters = trace_filter(p)
    return {"run": run.name, **clamped(run.graph_executions(p["begin"], p["end"], filters, call=p["call"]))}


def devices(run: RunQueries, p: Params) -> wire.DevicesResponse:
    return {"run": run.name, **run.device_counts()}


def graph_execution(run: RunQueries, p: Params) -> wire.GraphExecutionDetail:
    return run.graph_execution(p["index"], begin=p["begin"], max_elements=p["max_elements"])


ROUTES: tuple[RouteSpec, ...] = (
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
)

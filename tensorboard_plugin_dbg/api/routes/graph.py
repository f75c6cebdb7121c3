"""The graph views: one graph, one op (inputs, consumers, trace indices), and an op's neighbourhood."""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis import neighborhood
from tensorboard_plugin_dbg.api.params import Param, Params
from tensorboard_plugin_dbg.api.routes.shared import RUN
from tensorboard_plugin_dbg.api.spec import RouteSpec
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire


def graph(run: RunQueries, p: Params) -> wire.GraphInfo:
    return {"run": run.name, **run.graph(p["graph_id"])}


def op(run: RunQueries, p: Params) -> wire.OpInfo:
    return {"run": run.name, **run.op(p["graph_id"], p["op_name"], near=p["near"])}


def graph_neighborhood(run: RunQueries, p: Params) -> wire.NeighborhoodResponse:
    answer = neighborhood.neighborhood(run, p["graph_id"], p["op_name"], p["hops"], p["direction"], p["near"])
    return {"run": run.name, **answer}


ROUTES: tuple[RouteSpec, ...] = (
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
)

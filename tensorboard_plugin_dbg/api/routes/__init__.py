"""The one route table of the JSON API (`ROUTES`): it drives dispatch (`api/app.py`), parameter validation
(`api/params.py`) and the OpenAPI document (`api/openapi.py`), so the three cannot disagree.

Every route is GET `/data/plugin/dbg/<name>`. A route that declares a `run` parameter gets the resolved run
(`protocol.RunQueries`, unknown name -> 404); the others get the catalog. Handlers add the `run` field the index
leaves out and clamp page bounds to the total; everything else is the index's answer as is.

The routes live in groups, each module with its handlers and the parameters only they use (the shared ones:
shared.py): runs.py (the run list), lists.py (alerts, executions, graph execution traces, devices), graph.py
(graph, op, neighbourhood), source.py (files, lines, line ops, stack frames), analysis.py (timeline marks, root
cause, health map), tensors.py (tensor, tensor.npy, tensor inputs), capsules.py (NaN capsules),
compare.py, compare_rows.py and compare_values.py (two runs compared). A new route goes
in its group's `ROUTES`; this module only assembles them (and describes the API, which needs the whole table).
"""

from __future__ import annotations

from tensorboard_plugin_dbg.api import openapi as openapi_document
from tensorboard_plugin_dbg.api.params import Params
from tensorboard_plugin_dbg.api.routes import (
    analysis,
    capsules,
    compare,
    compare_rows,
    compare_values,
    graph,
    lists,
    runs,
    source,
    tensors,
)
from tensorboard_plugin_dbg.api.spec import RouteSpec
from tensorboard_plugin_dbg.index.protocol import Catalog


def openapi(catalog: Catalog, p: Params) -> openapi_document.Json:  # an OpenAPI document: not a wire type
    return openapi_document.document(ROUTES)


ROUTES: tuple[RouteSpec, ...] = (
    *runs.ROUTES,
    *lists.ROUTES,
    *graph.ROUTES,
    *source.ROUTES,
    *analysis.ROUTES,
    *tensors.ROUTES,
    *capsules.ROUTES,
    *compare.ROUTES,
    *compare_rows.ROUTES,
    *compare_values.ROUTES,
    RouteSpec("openapi.json", "This API as an OpenAPI 3.1 document.", (), openapi, None, uses_catalog=False),
)

ROUTES_BY_NAME: dict[str, RouteSpec] = {r.name: r for r in ROUTES}

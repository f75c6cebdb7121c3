"""What a route declares (its name, parameters, handler and wire.ts response type): the one shape that the route
table (routes.py), dispatch (app.py) and the OpenAPI document (openapi.py) all read."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tensorboard_plugin_dbg.api.params import Param


@dataclasses.dataclass(frozen=True)
class RouteSpec:
    """One GET route: `handler(target, params)` returns the JSON value; `response` names its wire.ts type."""

    name: str
    summary: str
    params: tuple[Param, ...]
    handler: Callable[[Any, dict[str, Any]], Any]  # (RunQueries or Catalog, parsed parameters) -> JSON value
    response: str | None
    paged: bool = False
    # False for routes that must answer without touching the catalog (describing the API never starts indexing).
    uses_catalog: bool = True

    @property
    def needs_run(self) -> bool:
        return any(p.name == "run" for p in self.params)

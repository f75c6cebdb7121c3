"""What a route declares (its name, parameters, handler and wire.ts response type): the one shape that the route
table (routes/), dispatch (app.py) and the OpenAPI document (openapi.py) all read."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from tensorboard_plugin_dbg.api.params import Param, Params


@dataclasses.dataclass(frozen=True)
class RouteSpec:
    """One GET route: `handler(target, params)` returns the JSON value; `response` names its wire.ts type."""

    name: str
    summary: str
    params: tuple[Param, ...]
    handler: Callable[[Any, Params], Any]  # (RunQueries or Catalog, parsed parameters) -> JSON value
    response: str | None
    paged: bool = False
    # False for routes that must answer without touching the catalog (describing the API never starts indexing).
    uses_catalog: bool = True
    # What a 200 answer is: JSON (the handler's value, through the one encoder), or bytes of this type (the
    # handler returns a Binary, streamed as it is).
    content_type: str = "application/json"
    # A route without a `run` parameter that can still answer 404: what its 404 means (the OpenAPI document says).
    not_found: str = ""

    @property
    def needs_run(self) -> bool:
        return any(p.name == "run" for p in self.params)

    def params_named(self, *names: str) -> tuple[Param, ...]:
        """Some of this route's parameters, for a route that takes them too (declared once, validated alike)."""
        return tuple(p for p in self.params if p.name in names)


@dataclasses.dataclass(frozen=True)
class Binary:
    """A binary answer: `chunks` streamed as they come, `length` bytes in all, offered as file `filename`."""

    chunks: Iterable[bytes]
    length: int
    filename: str
    content_type: str
    headers: dict[str, str] = dataclasses.field(default_factory=dict)

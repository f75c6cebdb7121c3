"""What a route declares (its name, parameters, handler and wire.ts response type): the one shape that the route
table (routes/), dispatch (app.py) and the OpenAPI document (openapi.py) all read."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
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
    # What a 200 answer is: JSON (the handler's value, through the one encoder), or bytes of this type (the
    # handler returns a Binary, streamed as it is).
    content_type: str = "application/json"
    # A route without `run` that still answers 404 for an unknown record (compare_values: run B's tensor).
    finds_records: bool = False

    @property
    def needs_run(self) -> bool:
        return any(p.name == "run" for p in self.params)


@dataclasses.dataclass(frozen=True)
class Binary:
    """A binary answer: `chunks` streamed as they come, `length` bytes in all, offered as file `filename`."""

    chunks: Iterable[bytes]
    length: int
    filename: str
    content_type: str
    headers: dict[str, str] = dataclasses.field(default_factory=dict)

"""The WSGI app behind `/data/plugin/dbg/<route>`: route table lookup, one validation, one error shape, one encoder.

Whatever happens, the answer is JSON: a bad request is a 4xx `ErrorResponse`; an exception we did not expect is
logged and answered as `internal` / 500 (a bug to fix, never a way to report bad input).
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Callable, Iterable
from typing import Any

from werkzeug import Request, Response

from tensorboard_plugin_dbg.api import errors, json_encoding
from tensorboard_plugin_dbg.api.params import parse_params
from tensorboard_plugin_dbg.api.routes import ROUTES_BY_NAME
from tensorboard_plugin_dbg.api.spec import Binary
from tensorboard_plugin_dbg.index import catalog as _catalog_module  # noqa: F401 - imported for its cost, see below
from tensorboard_plugin_dbg.index.protocol import NotFound

# The index's modules are imported here, when TensorBoard loads the plugin, and not by the first request that makes
# the catalog: a dashboard's first requests arrive together, and all of them waited for that import (~0.1 s, 0.3 s
# on a busy machine; bench/load.py's 50 first requests were its p99). Nothing is read or started by importing.

logger = logging.getLogger(__name__)

ROUTE_PREFIX = "/data/plugin/dbg/"


def route_name(path: str) -> str:
    """The route name of a request path (`/data/plugin/dbg/alerts/` -> `alerts`); '' when it has none."""
    if ROUTE_PREFIX not in path:
        return ""
    return path.split(ROUTE_PREFIX, 1)[1].strip("/")


class ApiApp:
    """Answers every API route; `get_catalog` is called per request so the catalog can be made lazily."""

    def __init__(self, get_catalog: Callable[[], Any]):
        self._get_catalog = get_catalog

    # environ: the WSGI environment, a dict of any values by PEP 3333
    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        request = Request(environ)
        return self.respond(request)(environ, start_response)

    def respond(self, request: Request) -> Response:
        headers: dict[str, str] = {}
        try:
            value, status = self._answer(request, headers), 200
        except errors.ApiError as e:
            value, status = errors.error_body(e.code, e.message), e.status
        except NotFound as e:
            value, status = errors.error_body(errors.NOT_FOUND, str(e) or "not found"), 404
        except Exception as e:  # a bug, not bad input: still JSON, with enough to find it in the log
            logger.exception("dbg API: %s failed", request.full_path)
            value, status = errors.error_body(errors.INTERNAL, f"{type(e).__name__}: {e}"), 500
        if isinstance(value, Binary):
            return binary_response(value)
        accept_gzip = request.accept_encodings.quality("gzip") > 0
        try:
            body, gzipped = json_encoding.encode_body(value, accept_gzip)
        except Exception as e:  # an answer the encoder cannot take is a bug too; report it as JSON
            logger.exception("dbg API: cannot encode the answer to %s", request.full_path)
            body, gzipped = json_encoding.encode_body(
                errors.error_body(errors.INTERNAL, f"cannot encode the answer: {e}"), False
            )
            status = 500
        return json_response(body, status, gzipped, headers)

    def _answer(self, request: Request, headers: dict[str, str]) -> Any:
        name = route_name(request.path)
        spec = ROUTES_BY_NAME.get(name)
        if spec is None:
            raise errors.ApiError(errors.NOT_FOUND, f"no route {name!r}; routes: {', '.join(ROUTES_BY_NAME)}")
        if request.method != "GET":
            headers["Allow"] = "GET"
            raise errors.ApiError(errors.METHOD_NOT_ALLOWED, f"{name} answers GET only, not {request.method}")
        params = parse_params(spec.params, request.args.to_dict(flat=False), paged=spec.paged)
        if not spec.uses_catalog:
            return spec.handler(None, params)
        catalog = self._get_catalog()
        target = catalog.run(params["run"]) if spec.needs_run else catalog
        return spec.handler(target, params)


def json_response(body: bytes, status: int, gzipped: bool, extra_headers: dict[str, str] | None = None) -> Response:
    headers = {
        # TensorBoard's security middleware requires nosniff; the data changes while the dump is indexed.
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "no-cache",
        "Vary": "Accept-Encoding",
        **(extra_headers or {}),
    }
    if gzipped:
        headers["Content-Encoding"] = "gzip"
    return Response(body, status=status, content_type="application/json; charset=utf-8", headers=headers)


def content_disposition(filename: str) -> str:
    """An attachment header for `filename` (array names come from capsules someone else wrote): an ASCII `filename=`
    with quotes, backslashes, controls and non-ASCII replaced by `_`, and the exact name as RFC 5987 `filename*=`."""
    plain = "".join(c if " " <= c <= "~" and c not in '"\\' else "_" for c in filename)
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{urllib.parse.quote(filename, safe='')}"


def binary_response(answer: Binary) -> Response:
    """A Binary answer streamed as it is (never gzipped: a tensor's bytes barely compress and may be 100s of MB)."""
    headers = {
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "no-cache",
        "Content-Length": str(answer.length),
        "Content-Disposition": content_disposition(answer.filename),
        **answer.headers,
    }
    return Response(
        answer.chunks, status=200, content_type=answer.content_type, headers=headers, direct_passthrough=True
    )

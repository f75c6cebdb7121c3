"""Serves the committed frontend bundle from the package's `static/` folder, and nothing outside it.

The name is taken from the decoded path (werkzeug decodes `%2e%2e` to `..` before we see it), then resolved with
symlinks followed and checked to lie inside STATIC_DIR, so `..`, encoded traversal, absolute paths and links out
of the folder all end in a JSON 404.
"""

from __future__ import annotations

import mimetypes
import os

from werkzeug import Request, Response

from tensorboard_plugin_dbg.api import errors, json_encoding
from tensorboard_plugin_dbg.api.app import ROUTE_PREFIX, json_response

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".map": "application/json"}


def resolve(name: str) -> str | None:
    """The absolute path of `name` inside STATIC_DIR, or None when it is absent or would escape the folder."""
    if not name or "\x00" in name or name.startswith(("/", "\\")) or os.path.isabs(name) or ":" in name:
        return None
    root = os.path.realpath(STATIC_DIR)
    path = os.path.realpath(os.path.join(root, name))
    if os.path.commonpath([path, root]) != root:
        return None
    return path if os.path.isfile(path) else None


def _error(code: str, message: str, extra_headers: dict[str, str] | None = None) -> Response:
    body, _ = json_encoding.encode_body(errors.error_body(code, message), False)
    return json_response(body, errors.STATUS_BY_CODE[code], False, extra_headers)


def static_name(path: str) -> str:
    """The file name a request path asks for: `.../index.js` -> `index.js`, `.../static/a/b.js` -> `a/b.js`."""
    tail = path.split(ROUTE_PREFIX, 1)[-1] if ROUTE_PREFIX in path else ""
    if tail == "index.js":
        return "index.js"
    return tail[len("static/"):] if tail.startswith("static/") else ""


@Request.application
def serve_static(request: Request) -> Response:
    if request.method not in ("GET", "HEAD"):
        return _error(errors.METHOD_NOT_ALLOWED, f"static files answer GET only, not {request.method}",
                      {"Allow": "GET, HEAD"})
    path = resolve(static_name(request.path))
    if path is None:
        return _error(errors.NOT_FOUND, "no such static file")
    with open(path, "rb") as f:
        body = f.read()
    ext = os.path.splitext(path)[1]
    content_type = _TYPES.get(ext) or mimetypes.guess_type(path)[0] or "application/octet-stream"
    return Response(body, content_type=content_type,
                    headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"})

"""Serves the committed frontend bundle from the package's `static/` folder, and nothing outside it."""

from __future__ import annotations

import mimetypes
import os

from werkzeug import Request, Response

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".map": "application/json"}


def resolve(name: str) -> str | None:
    """The absolute path of `name` inside STATIC_DIR, or None when it is absent or would escape the folder."""
    if not name or "\x00" in name or name.startswith(("/", "\\")):
        return None
    path = os.path.realpath(os.path.join(STATIC_DIR, name))
    if os.path.commonpath([path, os.path.realpath(STATIC_DIR)]) != os.path.realpath(STATIC_DIR):
        return None
    return path if os.path.isfile(path) else None


@Request.application
def serve_static(request: Request) -> Response:
    # Routes: /data/plugin/dbg/index.js and /data/plugin/dbg/static/<name>.
    marker = "/data/plugin/dbg/"
    tail = request.path.split(marker, 1)[-1]
    name = "index.js" if tail == "index.js" else tail[len("static/"):] if tail.startswith("static/") else ""
    path = resolve(name)
    if path is None:
        return Response('{"error": {"code": "not_found", "message": "no such static file"}}', status=404,
                        content_type="application/json")
    with open(path, "rb") as f:
        body = f.read()
    ext = os.path.splitext(path)[1]
    content_type = _TYPES.get(ext) or mimetypes.guess_type(path)[0] or "application/octet-stream"
    return Response(body, content_type=content_type, headers={"Cache-Control": "no-cache"})

"""Serves the committed frontend bundle from the package's `static/` folder, and nothing outside it.

The name is taken from the decoded path (werkzeug decodes `%2e%2e` to `..` before we see it), then resolved with
symlinks followed and checked to lie inside STATIC_DIR, so `..`, encoded traversal, absolute paths and links out
of the folder all end in a JSON 404.

The bundle is the plugin's first download in the dashboard's critical path, so it is sent gzip-compressed when
the browser accepts it (compressed once per file version, kept in memory), with an ETag so a reload revalidates
instead of downloading again. Webpack's lazily loaded chunks carry their content hash in their name
(webpack.config.js), so they are cached for good; `index.js` keeps its fixed name and is revalidated each time.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import mimetypes
import os
import re
from importlib import metadata

from werkzeug import Request, Response

from tensorboard_plugin_dbg.api import errors, json_encoding
from tensorboard_plugin_dbg.api.app import ROUTE_PREFIX, json_response
from tensorboard_plugin_dbg.wire.types import ErrorCode

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".map": "application/json"}
# `name.<16 hex digits>.js`: a webpack chunk named by its content hash (webpack.config.js `chunkFilename`).
_HASHED = re.compile(r"\.[0-9a-f]{16}\.js$")
_FOREVER = "public, max-age=31536000, immutable"


def resolve(name: str) -> str | None:
    """The absolute path of `name` inside STATIC_DIR, or None when it is absent or would escape the folder."""
    if not name or "\x00" in name or name.startswith(("/", "\\")) or os.path.isabs(name) or ":" in name:
        return None
    root = os.path.realpath(STATIC_DIR)
    path = os.path.realpath(os.path.join(root, name))
    if os.path.commonpath([path, root]) != root:
        return None
    return path if os.path.isfile(path) else None


def _error(code: ErrorCode, message: str, extra_headers: dict[str, str] | None = None) -> Response:
    body, _ = json_encoding.encode_body(errors.error_body(code, message), False)
    return json_response(body, errors.STATUS_BY_CODE[code], False, extra_headers)


def static_name(path: str) -> str:
    """The file name a request path asks for: `.../index.js` -> `index.js`, `.../static/a/b.js` -> `a/b.js`."""
    tail = path.split(ROUTE_PREFIX, 1)[-1] if ROUTE_PREFIX in path else ""
    if tail == "index.js":
        return "index.js"
    return tail[len("static/") :] if tail.startswith("static/") else ""


@Request.application
def serve_static(request: Request) -> Response:
    if request.method not in ("GET", "HEAD"):
        return _error(
            errors.METHOD_NOT_ALLOWED, f"static files answer GET only, not {request.method}", {"Allow": "GET, HEAD"}
        )
    path = resolve(static_name(request.path))
    if path is None:
        return _error(errors.NOT_FOUND, "no such static file")
    st = os.stat(path)
    body, gzipped, etag = _load(path, st.st_mtime_ns, st.st_size)
    ext = os.path.splitext(path)[1]
    content_type = _TYPES.get(ext) or mimetypes.guess_type(path)[0] or "application/octet-stream"
    headers = {
        "Cache-Control": _FOREVER if _HASHED.search(path) else "no-cache",
        "ETag": etag,
        "Vary": "Accept-Encoding",
        "X-Content-Type-Options": "nosniff",
    }
    if etag in request.headers.get("If-None-Match", ""):
        return Response(status=304, headers=headers)
    if gzipped is not None and "gzip" in request.headers.get("Accept-Encoding", ""):
        body = gzipped
        headers["Content-Encoding"] = "gzip"
    return Response(body, content_type=content_type, headers=headers)


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int, size: int) -> tuple[bytes, bytes | None, str]:
    """(body, its gzip or None when that is not smaller, ETag) of one version of a file (the key has its stat)."""
    with open(path, "rb") as f:
        body = f.read()
    # mtime=0: the same bytes every time, so the compressed body does not depend on when it was made.
    gzipped = gzip.compress(body, compresslevel=6, mtime=0)
    etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
    return body, (gzipped if len(gzipped) < len(body) else None), etag


def readme_text() -> str | None:
    """The README the dashboard's `?` links to: the checkout's (beside the package), else the installed
    distribution's long description (pyproject's `readme`); None when neither is there."""
    beside = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
    if os.path.isfile(beside):
        with open(beside, encoding="utf-8") as f:
            return f.read()
    try:
        return metadata.metadata("tensorboard-plugin-dbg").get_payload() or None  # type: ignore[attr-defined]
    except metadata.PackageNotFoundError:
        return None


@Request.application
def serve_readme(request: Request) -> Response:
    """`/data/plugin/dbg/readme`: the README as plain text (keys, panels, compare, capsules)."""
    if request.method not in ("GET", "HEAD"):
        return _error(errors.METHOD_NOT_ALLOWED, f"the README answers GET only, not {request.method}", {"Allow": "GET"})
    text = readme_text()
    if text is None:
        return _error(errors.NOT_FOUND, "no README in this installation")
    headers = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
    return Response(text, content_type="text/plain; charset=utf-8", headers=headers)

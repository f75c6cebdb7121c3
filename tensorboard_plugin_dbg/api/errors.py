"""The one error shape of the API: `{"error": {"code": "...", "message": "..."}}` (wire.ts `ErrorResponse`).

Every failure a client can cause is an `ApiError` with a 4xx status; the dispatcher turns it into JSON. Only a
true bug in our code reaches the client as `internal` / 500, and still as JSON, never as an HTML page.
"""

from __future__ import annotations

from typing import Final

from tensorboard_plugin_dbg.wire.types import ErrorCode, ErrorResponse

# Error codes (wire.ts ErrorResponse.code). Kept as constants so tests and the OpenAPI document use the same words.
BAD_PARAMETER: Final = "bad_parameter"  # 400: not an integer, out of bounds, begin > end, unknown value or name
MISSING_PARAMETER: Final = "missing_parameter"  # 400: a required parameter is absent (or empty)
PAGE_TOO_LARGE: Final = "page_too_large"  # 400: end - begin (or max_elements, or ids) over the cap
NOT_FOUND: Final = "not_found"  # 404: unknown route, run, index, graph, op or stack frame
METHOD_NOT_ALLOWED: Final = "method_not_allowed"  # 405: anything but GET
NOT_READY: Final = "not_ready"  # 503: reserved for "the index cannot answer yet"
INTERNAL: Final = "internal"  # 500: a bug in this plugin; the message says what broke

STATUS_BY_CODE: dict[ErrorCode, int] = {
    BAD_PARAMETER: 400,
    MISSING_PARAMETER: 400,
    PAGE_TOO_LARGE: 400,
    NOT_FOUND: 404,
    METHOD_NOT_ALLOWED: 405,
    NOT_READY: 503,
    INTERNAL: 500,
}


class ApiError(Exception):
    """A request the API refuses; `status` follows from `code` (see STATUS_BY_CODE)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = STATUS_BY_CODE[code]


def bad_parameter(message: str) -> ApiError:
    return ApiError(BAD_PARAMETER, message)


def error_body(code: ErrorCode, message: str) -> ErrorResponse:
    """The JSON body of an error (wire.ts ErrorResponse)."""
    return {"error": {"code": code, "message": message}}

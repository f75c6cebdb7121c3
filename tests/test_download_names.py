"""Boundary: names inside a capsule (array names) become a download's file name (docs/THREAT_MODEL.md). The
Content-Disposition header is an ASCII `filename=` (quotes, backslashes, controls and non-ASCII replaced) plus the
exact name as RFC 5987 `filename*=UTF-8''…`: a `"` no longer breaks it, CR/LF no longer turns the answer into a 500,
a non-Latin-1 name no longer leaves the client hanging."""

from __future__ import annotations

import urllib.parse

import pytest
from werkzeug.test import Client

from tensorboard_plugin_dbg.api.app import binary_response, content_disposition
from tensorboard_plugin_dbg.api.spec import Binary

NAMES = ["plain_name.npy", 'a"b\\c.npy', "line\r\nX-Evil: 1.npy", "poids_é€_数据.npy", "\x1b[2K\u202e.npy"]


@pytest.mark.parametrize("name", NAMES)
def test_content_disposition_is_ascii_with_the_exact_name_in_rfc_5987(name):
    header = content_disposition(name)
    assert header.isascii() and "\r" not in header and "\n" not in header
    plain, _, encoded = header.partition("; filename*=UTF-8''")
    assert plain.startswith('attachment; filename="') and plain.count('"') == 2 and "\\" not in plain
    assert urllib.parse.unquote(encoded, errors="strict") == name


@pytest.mark.parametrize("name", NAMES)
def test_a_binary_answer_with_that_name_is_served_whole(name):
    answer = Binary(chunks=[b"\x93NUMPY"], length=6, filename=name, content_type="application/octet-stream")

    def app(environ, start_response):
        return binary_response(answer)(environ, start_response)

    resp = Client(app).get("/")
    assert resp.status_code == 200 and resp.get_data() == b"\x93NUMPY"
    assert "X-Evil" not in resp.headers and resp.headers["Content-Disposition"] == content_disposition(name)

"""`compare A B` with URLs (#28 item 5 with #27): two runs of tests/programs/cmp_constant.py uploaded to memory:// and
to s3:// (moto's server on loopback, the socket guard on) compare exactly as their local copies do, FULL_TENSOR
values read back by range; a URL that cannot be read is a clear exit 2."""

from __future__ import annotations

import io
import json

import pytest

from harness import remote_servers as rs
from tensorboard_plugin_dbg.__main__ import build_parser
from tensorboard_plugin_dbg.reader import storage
from tensorboard_plugin_dbg.reader.storage import backends
from tests import dumps

pytestmark = pytest.mark.slow  # moto's server (~2 s to start)


@pytest.fixture(scope="module")
def pair():
    """kind -> (URL or folder of run A, of run B): the cmp_constant pair, local and uploaded."""
    local = (dumps.make_dump("cmp_constant", "a", "FULL_TENSOR"), dumps.make_dump("cmp_constant", "b", "FULL_TENSOR"))
    with rs.moto_server() as s3:
        with rs.patched_environ(rs.loopback_environment(s3, None)), rs.SocketGuard() as guard:
            fss = {"memory": backends.make_fs("memory"), "s3": backends.make_fs("s3")}
            fss["s3"].mkdir("cmp")
            for kind, fs in fss.items():
                for side, folder in zip("ab", local):
                    rs.upload_dir(fs, folder, f"{kind}://cmp/{side}/dump")  # run names as local: "dump"
            yield {
                "local": local,
                "memory": ("memory://cmp/a/dump", "memory://cmp/b/dump"),
                "s3": ("s3://cmp/a/dump", "s3://cmp/b/dump"),
            }
            fss["memory"].rm("memory://cmp", recursive=True)
            storage.forget()
        assert not guard.violations, guard.violations


def _compare(*argv: str) -> tuple[int, dict]:
    out = io.StringIO()
    args = build_parser().parse_args(["compare", *argv, "--json"])
    code = args.handler(args, out)
    return code, json.loads(out.getvalue())


@pytest.mark.parametrize("kind", ["memory", "s3"])
def test_compare_of_urls_is_the_compare_of_the_local_copies(pair, kind):
    local_code, local_doc = _compare(*pair["local"])
    assert local_code == 1 and local_doc["first_divergence"] is not None  # the injected constant
    code, doc = _compare(*pair[kind])
    assert code == local_code
    assert doc == local_doc


def test_compare_of_a_local_folder_with_a_url(pair):
    assert _compare(pair["local"][0], pair["s3"][1]) == _compare(*pair["local"])


def test_a_url_that_cannot_be_read_exits_2_with_why(pair):
    code, doc = _compare("s3://no-such-bucket/a", pair["s3"][1])
    assert code == 2 and doc["error"]["code"] == "unreadable"
    message = doc["error"]["message"]
    assert message.startswith("run A: s3://no-such-bucket/a") and "no-such-bucket" in message[30:], message
    code, doc = _compare("memory://cmp/nothing-here", pair["memory"][1])
    assert code == 2 and "No tfdbg2 dump found" in doc["error"]["message"], doc

"""The socket guard of the real `tensorboard` subprocess (#28: no request of a test may leave loopback):
TensorBoardProcess(socket_guard=True) starts TensorBoard with harness/guard_site's sitecustomize.py, which refuses
every Python connect() beyond loopback before it is made, and with a proxy on a closed loopback port for the HTTP
clients below Python (TensorFlow's libcurl for gs://). Nothing here leaves the machine: the guard refuses first,
and curl is sent to the dead loopback proxy."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.slow  # a real tensorboard (~10 s to start)

BEYOND = "192.0.2.1"  # TEST-NET-1 (RFC 5737): never routed; a connect that got through would hang, not be refused

CHILD = f"""
import os, socket, time
started = time.monotonic()
try:
    socket.create_connection(({BEYOND!r}, 80), timeout=20)
    print("connected")
except ConnectionRefusedError as exc:
    print(f"refused {{time.monotonic() - started:.3f}} {{os.getpid()}} {{exc}}")
"""


def test_the_tensorboard_process_runs_guarded_and_its_python_cannot_leave_loopback(tmp_path):
    with TensorBoardProcess(str(tmp_path), plugins="dbg", socket_guard=True) as tb:
        assert tb.guarded(), tb.guard_records()  # the server process itself installed the guard
        env = tb.environment()
        child = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=60)
        words = child.stdout.split()
        assert words[:1] == ["refused"] and "socket guard" in child.stdout, (child.stdout, child.stderr)
        assert float(words[1]) < 5  # refused at once, before any packet (a real attempt would wait for 20 s)
        assert tb.violations() == [f"refused: pid {words[2]} {BEYOND}:80"]
    assert tb.guarded() and len(tb.violations()) == 1  # the record outlives the process; its file is gone


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_http_clients_below_python_are_sent_to_a_dead_loopback_proxy(tmp_path):
    with TensorBoardProcess(str(tmp_path), plugins="dbg", socket_guard=True) as tb:
        env = tb.environment()
        proxy = env["HTTPS_PROXY"]
        assert proxy.startswith("http://127.0.0.1:")
        # libcurl (TensorFlow's gs:// client) goes to the proxy, where nothing listens: refused on loopback
        done = subprocess.run(
            ["curl", "-sS", "-m", "20", f"https://{BEYOND}/"], env=env, capture_output=True, text=True, timeout=60
        )
        port = proxy.rsplit(":", 1)[1]
        assert done.returncode == 7 and f"127.0.0.1 port {port}" in done.stderr, done.stderr  # 7: could not connect

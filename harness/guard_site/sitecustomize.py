"""Loaded by every Python process started with harness/guard_site on PYTHONPATH (harness/tensorboard_process.py's
`socket_guard=True`, for tests only): when DBG_SOCKET_GUARD names a file, every connect() of this process to an
address beyond loopback is refused before it is made, and written to that file; the file's first line for this
process says the guard is on ("guard on: pid N"), so a test can tell that the process it started runs guarded."""

from __future__ import annotations

import os
import socket

_LOG = os.environ.get("DBG_SOCKET_GUARD")
_LOOPBACK = ("127.", "::1", "localhost")


def _record(line: str) -> None:
    if _LOG:
        with open(_LOG, "a") as f:
            f.write(line + "\n")


def _install() -> None:
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex

    def check(sock: socket.socket, address: object) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
            host = str(address[0])
            if not host.startswith(_LOOPBACK):
                _record(f"refused: pid {os.getpid()} {host}:{address[1]}")
                raise ConnectionRefusedError(f"socket guard: {host}:{address[1]} is beyond loopback")

    def guarded_connect(sock: socket.socket, address: object) -> None:
        check(sock, address)
        return connect(sock, address)  # type: ignore[arg-type]

    def guarded_connect_ex(sock: socket.socket, address: object) -> int:
        check(sock, address)
        return connect_ex(sock, address)  # type: ignore[arg-type]

    socket.socket.connect = guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]
    _record(f"guard on: pid {os.getpid()}")


if _LOG:
    _install()

"""A real `tensorboard` subprocess on a free loopback port, for API and end-to-end tests."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TensorBoardProcess:
    """`tensorboard --logdir LOGDIR --host 127.0.0.1 --port PORT`, started and stopped by `with`."""

    def __init__(self, logdir: str, extra_args: tuple[str, ...] = (), startup_timeout: float = 90):
        self.logdir = logdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._extra = extra_args
        self._timeout = startup_timeout
        self._proc: subprocess.Popen | None = None
        self._log_dir = tempfile.mkdtemp(prefix="dbg-tb-")
        self.log_path = os.path.join(self._log_dir, "tensorboard.log")

    def __enter__(self) -> TensorBoardProcess:
        exe = shutil.which("tensorboard", path=os.path.dirname(sys.executable)) or shutil.which("tensorboard")
        cmd = [exe] if exe else [sys.executable, "-m", "tensorboard.main"]
        cmd += ["--logdir", self.logdir, "--host", "127.0.0.1", "--port", str(self.port), *self._extra]
        self._log = open(self.log_path, "w")
        self._proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self._timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"tensorboard exited ({self._proc.returncode}):\n{self.log()}")
            try:
                self.get_json("/data/plugins_listing", timeout=2)
                return self
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.2)
        self.__exit__(None, None, None)
        raise RuntimeError(f"tensorboard did not answer within {self._timeout}s:\n{self.log()}")

    def __exit__(self, *exc) -> None:
        if self._proc and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if getattr(self, "_log", None):
            self._log.close()

    def log(self) -> str:
        try:
            with open(self.log_path) as f:
                return f.read()[-6000:]
        except OSError:
            return ""

    def get(self, path: str, timeout: float = 30) -> tuple[int, dict[str, str], bytes]:
        req = urllib.request.Request(self.url + path)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def get_json(self, path: str, timeout: float = 30):
        status, _, body = self.get(path, timeout=timeout)
        if status != 200:
            raise urllib.error.URLError(f"{path}: HTTP {status}")
        return json.loads(body)

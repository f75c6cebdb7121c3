"""A real `tensorboard` subprocess on a free loopback port: the one launcher of the tests and the benchmarks.

    with TensorBoardProcess(logdir) as tb:            # the stock `tensorboard` command, plugins from entry points
        tb.get_json("/data/plugin/dbg/runs")
    with TensorBoardProcess(dump, plugins="dbg", measure_rss=True, extra_args=("--load_fast", "false")) as tb:
        status, headers, body, seconds = tb.get(path)  # harness/tb_launch.py: one debugger only
        tb.peak_rss_bytes()

It counts as started at its first 200 answer to `ready_path` (`first_answer`, time.monotonic()). The default,
`/data/plugins_listing`, is what TensorBoard's page asks first: our plugin's is_active() starts its catalog reading,
as in a user's session. Benchmarks pass `/data/environment`, which touches no plugin's data, so no debugger starts
reading before their clock starts. Its output goes to a
temporary log file, removed when the process is stopped (`log()` still returns the tail after that).
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TB_LAUNCH = os.path.join(ROOT, "harness", "tb_launch.py")
GUARD_SITE = os.path.join(ROOT, "harness", "guard_site")  # its sitecustomize.py guards the process's sockets
PLUGIN_SETS = ("dbg", "debugger-v2", "none")  # harness/tb_launch.py's choices


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_status_kib(pid: int, field: str) -> int:
    """VmRSS / VmHWM of a process, in KiB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class HTTPStatusError(RuntimeError):
    """A JSON answer was asked for and the status was not 200."""


class Response(NamedTuple):
    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float  # request sent to body read, on a fresh connection

    def json(self) -> Any:
        if self.status != 200:
            raise HTTPStatusError(f"HTTP {self.status}: {self.body[:300]!r}")
        return json.loads(self.body)


class TensorBoardProcess:
    """`tensorboard --logdir LOGDIR --host 127.0.0.1 --port PORT`, started and stopped by `with`.

    plugins: None runs the stock `tensorboard` command (every plugin, ours through its entry point, as a user runs
    it); "dbg", "debugger-v2" or "none" runs harness/tb_launch.py with TensorBoard's built-in plugins and only that
    debugger (or neither). measure_rss: sample VmRSS every 50 ms, so `peak_rss_bytes()` never misses a peak.
    ready_path: the route whose first 200 answer means started (see the module's docstring). socket_guard (tests of
    remote logdirs): the process refuses every Python connect() beyond loopback (harness/guard_site; `guarded()`
    and `violations()` read its record), and HTTP clients below Python (TensorFlow's curl for gs://, RustBoard)
    get a proxy on a closed loopback port, so that they cannot leave the machine either."""

    def __init__(
        self,
        logdir: str,
        plugins: str | None = None,
        extra_args: tuple[str, ...] = (),
        startup_timeout: float = 120,
        measure_rss: bool = False,
        ready_path: str = "/data/plugins_listing",
        socket_guard: bool = False,
    ):
        if plugins is not None and plugins not in PLUGIN_SETS:
            raise ValueError(f"plugins={plugins!r}: one of {PLUGIN_SETS} or None")
        self.logdir, self.plugins = logdir, plugins
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.first_answer: float | None = None
        self.proc: subprocess.Popen | None = None
        self._extra, self._timeout, self._measure_rss = tuple(extra_args), startup_timeout, measure_rss
        self._ready_path = ready_path
        self._peak_rss_kib = 0
        self._sampling = False
        self._log_path: str | None = None
        self._log_tail = ""
        self._socket_guard = socket_guard
        self._guard_path: str | None = None  # the guard's record, made by environment(), removed by __exit__
        self._guard_tail: list[str] = []

    def command(self) -> list[str]:
        if self.plugins is None:
            exe = shutil.which("tensorboard", path=os.path.dirname(sys.executable)) or shutil.which("tensorboard")
            cmd = [exe] if exe else [sys.executable, "-m", "tensorboard.main"]
        else:
            cmd = [sys.executable, TB_LAUNCH, self.plugins]
        return cmd + ["--logdir", self.logdir, "--host", "127.0.0.1", "--port", str(self.port), *self._extra]

    def environment(self) -> dict[str, str]:
        """The subprocess's environment (also for a test that checks what it does)."""
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        # This checkout's package first, whatever the virtualenv has installed.
        env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
        if self._socket_guard:
            if self._guard_path is None:
                fd, self._guard_path = tempfile.mkstemp(prefix="dbg-tb-guard-", suffix=".log")
                os.close(fd)
            env["PYTHONPATH"] = GUARD_SITE + os.pathsep + env["PYTHONPATH"]
            env["DBG_SOCKET_GUARD"] = self._guard_path
            dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there: a proxied request is refused at once
            for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
                env[name] = dead
            env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost,::1"  # the loopback servers, directly
        return env

    def guard_records(self) -> list[str]:
        """What the socket guard wrote: "guard on: pid N" per guarded process, "refused: pid N HOST:PORT" per
        refusal ([] without socket_guard)."""
        if not self._guard_path:
            return list(self._guard_tail)
        try:
            with open(self._guard_path) as f:
                return f.read().splitlines()
        except OSError:
            return list(self._guard_tail)

    def violations(self) -> list[str]:
        return [line for line in self.guard_records() if line.startswith("refused:")]

    def guarded(self) -> bool:
        """Whether the TensorBoard process itself runs with the guard on."""
        return self.proc is not None and f"guard on: pid {self.proc.pid}" in self.guard_records()

    def __enter__(self) -> TensorBoardProcess:
        env = self.environment()
        fd, self._log_path = tempfile.mkstemp(prefix="dbg-tb-", suffix=".log")
        with os.fdopen(fd, "w") as log:
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, env=env)
        if self._measure_rss:
            self._sampling = True
            threading.Thread(target=self._sample_rss, daemon=True).start()
        deadline = time.monotonic() + self._timeout
        try:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"tensorboard exited ({self.proc.returncode}):\n{self.log()}")
                try:
                    if self.get(self._ready_path, timeout=2).status == 200:
                        self.first_answer = time.monotonic()
                        return self
                except OSError:
                    pass
                time.sleep(0.05)
            raise RuntimeError(f"tensorboard did not answer within {self._timeout}s:\n{self.log()}")
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def __exit__(self, *exc: object) -> None:
        self._sampling = False
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._log_path:
            self._log_tail = self._read_log()
            os.unlink(self._log_path)
            self._log_path = None
        if self.proc:
            self._remove_info_file(self.proc.pid)
        if self._guard_path:
            self._guard_tail = self.guard_records()
            os.unlink(self._guard_path)
            self._guard_path = None

    @staticmethod
    def _remove_info_file(pid: int) -> None:
        """TensorBoard registers itself in TMPDIR/.tensorboard-info/pid-PID.info (for `tensorboard --list`) and a
        terminated one leaves it there; the folder goes too once no other TensorBoard has a file in it."""
        info_dir = os.path.join(tempfile.gettempdir(), ".tensorboard-info")
        for path, remove in ((os.path.join(info_dir, f"pid-{pid}.info"), os.unlink), (info_dir, os.rmdir)):
            try:
                remove(path)
            except OSError:
                pass

    def _read_log(self) -> str:
        try:
            with open(self._log_path or "", errors="replace") as f:
                return f.read()[-6000:]
        except OSError:
            return ""

    def log(self) -> str:
        """The last 6000 characters TensorBoard wrote (also after it was stopped)."""
        return self._read_log() if self._log_path else self._log_tail

    def _sample_rss(self) -> None:
        # VmHWM is the kernel's own peak; sampling VmRSS too guards against a reading after the process ended.
        while self._sampling and self.proc and self.proc.poll() is None:
            self._peak_rss_kib = max(self._peak_rss_kib, proc_status_kib(self.proc.pid, "VmRSS"))
            time.sleep(0.05)

    def rss_bytes(self) -> int:
        assert self.proc is not None
        return proc_status_kib(self.proc.pid, "VmRSS") * 1024

    def peak_rss_bytes(self) -> int:
        assert self.proc is not None
        return max(proc_status_kib(self.proc.pid, "VmHWM"), self._peak_rss_kib) * 1024

    def get(self, path: str, timeout: float = 120, headers: dict[str, str] | None = None) -> Response:
        """One GET on a fresh connection (like a browser's first fetch); redirects are not followed."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            started = time.perf_counter()
            conn.request("GET", path, headers=headers or {})
            resp = conn.getresponse()
            body = resp.read()
            return Response(resp.status, dict(resp.getheaders()), body, time.perf_counter() - started)
        finally:
            conn.close()

    def get_json(self, path: str, timeout: float = 120) -> Any:
        """The parsed body of a 200 answer (HTTPStatusError otherwise)."""
        return self.get(path, timeout).json()

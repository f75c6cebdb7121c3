"""A benchmark TensorBoard process: one debugger loaded (see tb_launch.py), timed HTTP GETs, memory from /proc."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Self

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH_DIR)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def warm_page_cache(directory: str) -> float:
    """Reads every file under `directory` once (discarding the bytes); returns the seconds it took. This VM's
    kernel reclaims page cache it finds cold (DAMON), so a dump left alone for half an hour is read from disk
    again: the first 10 M run after a pause indexed in 22 s instead of 14 s and paged at 3.3 ms instead of 1.5.
    Each system gets the dump from the page cache, as a dump TensorFlow has just written is; the seconds
    returned show whether it had gone cold."""
    started = time.monotonic()
    buf = bytearray(8 << 20)
    for folder, _dirs, files in os.walk(directory):
        for name in files:
            with open(os.path.join(folder, name), "rb", buffering=0) as f:
                while f.readinto(buf):
                    pass
    return time.monotonic() - started


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


class BenchTensorBoard:
    """`with BenchTensorBoard(logdir, "dbg") as tb:` — started, answering, and stopped at the end."""

    def __init__(self, logdir: str, which: str, startup_timeout: float = 120):
        self.logdir, self.which = logdir, which
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self.first_answer: float | None = None  # time.monotonic() of the first HTTP answer
        self.log_path = os.path.join(tempfile.mkdtemp(prefix=f"bench-tb-{which}-"), "tensorboard.log")
        self._peak_rss_kib = 0
        self._sampling = False

    def __enter__(self) -> Self:
        env = dict(
            os.environ,
            CUDA_VISIBLE_DEVICES="",
            TF_CPP_MIN_LOG_LEVEL="2",
            PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
        )
        cmd = [
            sys.executable,
            os.path.join(BENCH_DIR, "tb_launch.py"),
            self.which,
            "--logdir",
            self.logdir,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--load_fast",
            "false",
        ]
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env)
        self._sampling = True
        threading.Thread(target=self._sample_rss, daemon=True).start()
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tensorboard exited ({self.proc.returncode}):\n{self.log()}")
            try:
                # /data/environment answers once the server is up and touches no plugin's data, so neither
                # debugger starts reading before the clock starts.
                status, _, _ = self.get("/data/environment", timeout=2)
                if status == 200:
                    self.first_answer = time.monotonic()
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        self.__exit__()
        raise RuntimeError(f"tensorboard did not answer within {self.timeout}s:\n{self.log()}")

    def __exit__(self, *exc) -> None:
        self._sampling = False
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "_log", None):
            self._log.close()

    def _sample_rss(self) -> None:
        # VmHWM is the kernel's own peak; sampling VmRSS too guards against a reading after the process ended.
        while self._sampling and self.proc and self.proc.poll() is None:
            self._peak_rss_kib = max(self._peak_rss_kib, proc_status_kib(self.proc.pid, "VmRSS"))
            time.sleep(0.05)

    def rss_bytes(self) -> int:
        return proc_status_kib(self.proc.pid, "VmRSS") * 1024

    def peak_rss_bytes(self) -> int:
        return max(proc_status_kib(self.proc.pid, "VmHWM"), self._peak_rss_kib) * 1024

    def log(self) -> str:
        try:
            with open(self.log_path) as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def get(self, path: str, timeout: float = 120) -> tuple[int, float, bytes]:
        """(HTTP status, seconds taken, body); a fresh connection per request, like a browser's first fetch."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            started = time.perf_counter()
            conn.request("GET", path)
            resp = conn.getresponse()
            body = resp.read()
            return resp.status, time.perf_counter() - started, body
        finally:
            conn.close()

    def get_json(self, path: str, timeout: float = 120):
        status, secs, body = self.get(path, timeout)
        if status != 200:
            raise RuntimeError(f"GET {path}: HTTP {status}: {body[:300]!r}")
        return json.loads(body), secs

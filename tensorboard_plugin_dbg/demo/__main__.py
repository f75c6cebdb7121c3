"""`python -m tensorboard_plugin_dbg.demo`: write the buggy MLP's NaN dump, then serve TensorBoard on it.

Prints the URL of the Debugger tab once TensorBoard answers on it. Needs the `demo` extra (TensorFlow CPU,
scikit-learn). The port is checked before anything is written: a busy one (an earlier demo still serving) is replaced
by a free one, said so. Ending the demo (Ctrl-C, `kill PID`, a closed terminal) ends TensorBoard with it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

# The `demo` extra's modules (pyproject.toml) and the package each comes from.
EXTRA_MODULES = (("tensorflow", "tensorflow-cpu"), ("sklearn", "scikit-learn"))
EXTRA_HINT = 'pip install "tensorboard-plugin-dbg[demo]" (from a checkout: pip install ".[demo]")'
# The training program, run by its path: run as `-m`, TensorFlow's dump writer finds runpy's frames on the stack and
# warns "Failed to read source code from path: .../<frozen runpy>".
TRAINING_PROGRAM = Path(__file__).with_name("buggy_mlp.py")
# How long TensorBoard may take to answer on its port before the demo gives up on it.
SERVE_TIMEOUT_S = 120.0


def missing_extra() -> list[str]:
    """The `demo` extra's packages that cannot be imported here (looked up, not imported: TensorFlow takes seconds)."""
    missing = []
    for module, package in EXTRA_MODULES:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # ValueError: sys.modules holds None for it (an import blocked on purpose)
            found = False
        if not found:
            missing.append(package)
    return missing


def port_is_free(host: str, port: int) -> bool:
    """Whether `port` can be bound on `host` now (TensorBoard binds it without SO_REUSEPORT, so a bind test is it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def choose_port(host: str, wanted: int) -> int:
    """`wanted` when free, else a free port, said so on stderr (before the dump is replaced)."""
    if port_is_free(host, wanted):
        return wanted
    port = free_port(host)
    print(f"demo: port {wanted} is busy (an earlier demo or TensorBoard?); serving on {port} instead", file=sys.stderr)
    return port


class Children:
    """The demo's child processes, ended with it: on SIGTERM or SIGHUP (`kill PID`, a closed terminal) the running
    child is terminated and waited for before the demo exits, so no TensorBoard is left serving behind a dead
    wrapper."""

    def __init__(self) -> None:
        self.running: subprocess.Popen[bytes] | None = None
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._end)

    def _end(self, signum: int, _frame: FrameType | None) -> None:
        # Only signals here: the interrupted frame may be inside the child's wait(), holding its lock; the `finally`
        # that the SystemExit runs through waits for the child (stop()).
        if self.running is not None:
            self.running.terminate()
        raise SystemExit(128 + signum)

    def start(self, command: list[str]) -> subprocess.Popen[bytes]:
        self.running = subprocess.Popen(command)
        return self.running

    def stop(self) -> None:
        child, self.running = self.running, None
        if child is None or child.poll() is not None:
            return
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()

    def run(self, command: list[str]) -> int:
        try:
            return self.start(command).wait()
        finally:
            self.stop()


def wait_until_serving(child: subprocess.Popen[bytes], host: str, port: int) -> bool:
    """True once something accepts connections on (host, port) while `child` runs; False when it exits first."""
    deadline = time.monotonic() + SERVE_TIMEOUT_S
    while time.monotonic() < deadline and child.poll() is None:
        try:
            with socket.create_connection((host, port), timeout=1):
                return child.poll() is None
        except OSError:
            time.sleep(0.2)
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tensorboard_plugin_dbg.demo", description=__doc__)
    parser.add_argument(
        "--logdir",
        default=os.path.abspath("dbg-demo-logdir"),
        help="where the dump is written (default: ./dbg-demo-logdir); it is replaced",
    )
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--tensor-debug-mode", default="FULL_HEALTH")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=6006)
    parser.add_argument("--no-tensorboard", action="store_true", help="only write the dump")
    args = parser.parse_args(argv)
    missing = missing_extra()
    if missing:
        # Before anything is written or replaced: no half-written dump, the previous one kept.
        print(f"demo: needs the demo extra ({', '.join(missing)} missing): {EXTRA_HINT}", file=sys.stderr)
        return 1

    port = args.port if args.no_tensorboard else choose_port(args.host, args.port)
    children = Children()
    dump_dir = os.path.join(args.logdir, "buggy_mlp")
    shutil.rmtree(dump_dir, ignore_errors=True)
    print(f"demo: training the buggy MLP for {args.steps} steps, dumping to {dump_dir} ...", flush=True)
    # A child process, so that TensorFlow's dump writer is closed and flushed before TensorBoard starts.
    trained = children.run(
        [
            sys.executable,
            str(TRAINING_PROGRAM),
            dump_dir,
            "--steps",
            str(args.steps),
            "--tensor-debug-mode",
            args.tensor_debug_mode,
            "--circular-buffer-size",
            "-1",
        ]
    )
    if trained != 0:
        print(f"demo: the training program failed (exit {trained}); its error is above", file=sys.stderr)
        return trained
    if args.no_tensorboard:
        return 0
    return serve(children, args.logdir, args.host, port)


def serve(children: Children, logdir: str, host: str, port: int) -> int:
    """Runs TensorBoard on `logdir` until it ends or the demo is stopped; prints the URL only once it answers."""
    tensorboard = [
        sys.executable,
        "-m",
        "tensorboard.main",
        "--logdir",
        logdir,
        "--host",
        host,
        "--port",
        str(port),
    ]
    try:
        child = children.start(tensorboard)
        if not wait_until_serving(child, host, port):
            children.stop()
            failed = f"demo: TensorBoard did not start on {host}:{port} (exit {child.returncode}); its error is above"
            print(failed, file=sys.stderr)
            return child.returncode or 1
        print(f"demo: open http://{host}:{port}/#dbg  (Ctrl-C to stop)", flush=True)
        return child.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        children.stop()


if __name__ == "__main__":
    raise SystemExit(main())

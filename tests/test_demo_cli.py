"""`python -m tensorboard_plugin_dbg.demo` without its extra (issue #25): one line naming the extra to install, a
non-zero exit, and nothing written or replaced (no half-written dump)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request

import dumps
import pytest

from tensorboard_plugin_dbg.demo import __main__ as demo_main

# Runs the demo's entry point with one module's import blocked (sys.modules[name] = None: `import name` fails).
BLOCKED_RUN = (
    "import sys; sys.modules[sys.argv.pop(1)] = None; "
    "from tensorboard_plugin_dbg.demo.__main__ import main; raise SystemExit(main(sys.argv[1:]))"
)


def _run_demo_without(module: str, cwd: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=dumps.ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-c", BLOCKED_RUN, module, *args, "--no-tensorboard"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(("module", "package"), [("sklearn", "scikit-learn"), ("tensorflow", "tensorflow-cpu")])
def test_demo_without_extra_says_which_and_writes_nothing(tmp_path, module, package):
    proc = _run_demo_without(module, str(tmp_path))  # the default logdir: ./dbg-demo-logdir
    assert proc.returncode == 1, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr  # one line, no traceback
    assert package in lines[0] and 'pip install "tensorboard-plugin-dbg[demo]"' in lines[0], lines
    assert 'pip install ".[demo]"' in lines[0], lines
    assert proc.stdout == ""
    assert os.listdir(tmp_path) == []  # no dbg-demo-logdir, nothing else


def test_demo_without_extra_keeps_the_previous_dump(tmp_path):
    previous = tmp_path / "logdir" / "buggy_mlp"
    previous.mkdir(parents=True)
    (previous / "kept").write_text("x")
    proc = _run_demo_without("sklearn", str(tmp_path), "--logdir", str(tmp_path / "logdir"))
    assert proc.returncode == 1 and "scikit-learn" in proc.stderr, proc
    assert os.listdir(previous) == ["kept"]


def test_missing_extra_names_a_package_not_installed(monkeypatch):
    monkeypatch.setattr(demo_main, "EXTRA_MODULES", (("sklearn", "scikit-learn"), ("no_such_module_dbg", "no-such")))
    assert demo_main.missing_extra() == ["no-such"]


def test_choose_port_keeps_a_free_port_and_replaces_a_busy_one(capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        chosen = demo_main.choose_port("127.0.0.1", taken)
        assert chosen != taken and demo_main.port_is_free("127.0.0.1", chosen)
        assert f"port {taken} is busy" in capsys.readouterr().err
    assert demo_main.choose_port("127.0.0.1", chosen) == chosen


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def test_demo_on_a_busy_port_serves_elsewhere_and_kill_takes_tensorboard_down(tmp_path):
    """Issue #40 item 16: an earlier server holds the port; the demo says so before replacing the dump, prints the
    URL of its own TensorBoard only once that answers, and `kill` of the demo's PID ends that TensorBoard too.
    Item 14: TensorFlow's writer no longer warns about `<frozen runpy>`."""
    (tmp_path / "tmp").mkdir()  # TensorBoard's .tensorboard-info goes there, removed with tmp_path
    env = dict(os.environ, PYTHONPATH=dumps.ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env["TMPDIR"] = str(tmp_path / "tmp")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        demo = subprocess.Popen(
            [sys.executable, "-m", "tensorboard_plugin_dbg.demo", "--steps", "2", "--port", str(taken)]
            + ["--logdir", str(tmp_path / "logdir")],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            url_line = ""
            for line in demo.stdout:  # type: ignore[union-attr]
                if line.startswith("demo: open "):
                    url_line = line
                    break
            match = re.search(r"http://127\.0\.0\.1:(\d+)/#dbg", url_line)
            assert match, url_line
            port = int(match.group(1))
            assert port != taken
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/data/plugins_listing", timeout=30) as reply:
                assert "dbg" in json.loads(reply.read())  # our TensorBoard answers, not the stale server
            os.kill(demo.pid, signal.SIGTERM)
            assert demo.wait(timeout=30) == 128 + signal.SIGTERM
            assert not _answers(port)  # TensorBoard went down with the demo
            stderr = demo.stderr.read()  # type: ignore[union-attr]
            assert f"port {taken} is busy" in stderr
            assert "Failed to read source code" not in stderr, stderr
        finally:
            if demo.poll() is None:
                demo.kill()
                demo.wait()
            demo.stdout.close()  # type: ignore[union-attr]
            demo.stderr.close()  # type: ignore[union-attr]

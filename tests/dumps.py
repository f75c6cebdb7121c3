"""Dumps written by real TensorFlow, made once and reused.

Each program under tests/programs/ is run as `python tests/programs/NAME.py DUMP_DIR [ARGS...]` in a subprocess and
writes one dump. The result is cached under .pytest_cache/dumps/NAME-<hash of program source, args, demo source and
the kernel settings below>, so a test session makes each dump at most once and an unchanged program is not re-run by
the next session either.

This module is the one place that runs TensorFlow programs for the tests. The caller's TF_ENABLE_ONEDNN_OPTS is
passed through unchanged (TensorFlow's oneDNN kernels, on by default on x86-64, change how many softmax outputs
underflow to 0), and its value is part of the cache key, so dumps written with oneDNN on, off and unset never mix.
Tests read any count that the CPU or the kernels decide from the dump itself, never as a literal.

A real dump is not the same twice: tf.data's parallel threads, tf.distribute's replicas and TensorFlow's inter-op
threads decide the order (and some content) of its records. To run the tests against fresh dumps (test-only; CI
leaves it unset and its keys are unchanged), set DBG_TEST_DUMP_SALT to any string: it joins every cache key, so each
new value makes each program write a new dump once (e.g. `DBG_TEST_DUMP_SALT=run3 taskset -c 0 pytest ...`, or write
the dumps first under some load with `make_dump`, then run the tests with the same salt).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "tests", "programs")
CACHE = os.path.join(ROOT, ".pytest_cache", "dumps")
DEMO_SOURCE = os.path.join(ROOT, "tensorboard_plugin_dbg", "demo", "buggy_mlp.py")
# Environment variables that change what TensorFlow's kernels compute, and so what a dump holds.
KERNEL_ENV = ("TF_ENABLE_ONEDNN_OPTS",)
# Test-only: a string that joins every cache key when set, to force fresh dumps (see the docstring). Unset on CI.
SALT_ENV = "DBG_TEST_DUMP_SALT"
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def program_path(name: str) -> str:
    return os.path.join(PROGRAMS, name + ".py")


# Programs whose output the package's own code writes (NaN capsules, #26): that code's source is in their key too.
CAPSULE_SOURCES = tuple(
    sorted(
        os.path.join(ROOT, "tensorboard_plugin_dbg", "capsule", f)
        for f in os.listdir(os.path.join(ROOT, "tensorboard_plugin_dbg", "capsule"))
        if f.endswith(".py")
    )
) + (os.path.join(ROOT, "tensorboard_plugin_dbg", "reader", "capsule_files.py"),)


# Programs whose dump the package's own writer writes (tests/writer_sets.py, the JAX writer): its source is keyed.
WRITER_SOURCES = tuple(
    sorted(
        os.path.join(ROOT, "tensorboard_plugin_dbg", d, f)
        for d in ("writer", "jax")
        if os.path.isdir(os.path.join(ROOT, "tensorboard_plugin_dbg", d))
        for f in os.listdir(os.path.join(ROOT, "tensorboard_plugin_dbg", d))
        if f.endswith(".py")
    )
) + (os.path.join(ROOT, "tests", "writer_sets.py"),)


def _siblings(path: str) -> list[str]:
    """The programs under PROGRAMS that the program at `path` imports by name (`import x` / `from x import y`, one
    level: a sibling's own siblings are rare and would be listed by the program too)."""
    with open(path, encoding="utf-8") as f:
        words = [line.split()[1].split(".")[0] for line in f if line.startswith(("import ", "from "))]
    return sorted({p for p in (os.path.join(PROGRAMS, w + ".py") for w in words) if os.path.exists(p)} - {path})


def _key(name: str, args: tuple[str, ...]) -> str:
    h = hashlib.sha1()
    sources = CAPSULE_SOURCES if name.startswith("capsule_") else ()
    sources += WRITER_SOURCES if name.startswith(("writer_", "jax_")) else ()
    sources += (os.path.join(PROGRAMS, "_twin_data.py"),) if name.endswith("_bugs") else ()
    program = program_path(name)
    sources += tuple(_siblings(program)) if os.path.exists(program) else ()
    for path in (program, DEMO_SOURCE, os.path.join(PROGRAMS, "_common.py"), *sources):
        if os.path.exists(path):
            with open(path, "rb") as f:
                h.update(f.read())
    h.update(repr(args).encode())
    h.update(repr(kernel_settings()).encode())
    if os.environ.get(SALT_ENV):
        h.update(b"salt:" + os.environ[SALT_ENV].encode())
    return f"{name}-{h.hexdigest()[:12]}"


def kernel_settings() -> tuple[tuple[str, str | None], ...]:
    """The caller's values of KERNEL_ENV (None where unset): part of every dump's cache key."""
    return tuple((name, os.environ.get(name)) for name in KERNEL_ENV)


def env_for_tf() -> dict[str, str]:
    """The caller's environment (TF_ENABLE_ONEDNN_OPTS included, unchanged), quiet, on the CPU, importing this
    checkout."""
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["CUDA_VISIBLE_DEVICES"] = env.get("CUDA_VISIBLE_DEVICES", "")
    return env


def make_dump(name: str, *args: str, timeout: float = 600) -> str:
    """The dump directory written by tests/programs/NAME.py with ARGS (made on first use, then cached)."""
    key = _key(name, args)
    with _locks_guard:
        lock = _locks.setdefault(key, threading.Lock())
    out = os.path.join(CACHE, key)
    with lock, _file_lock(out + ".lock"):
        if os.path.exists(os.path.join(out, ".complete")):
            return os.path.join(out, "dump")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        proc = subprocess.run(
            [sys.executable, program_path(name), os.path.join(out, "dump"), *args],
            cwd=ROOT,
            env=env_for_tf(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"tests/programs/{name}.py failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        with open(os.path.join(out, "program.log"), "w") as f:
            f.write(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
        open(os.path.join(out, ".complete"), "w").close()
        return os.path.join(out, "dump")


@contextlib.contextmanager
def _file_lock(path: str):  # type: ignore[no-untyped-def]
    """An exclusive lock on PATH held across processes: two pytest sessions (or xdist workers) building the same
    dump wait for each other instead of one wiping the folder the other is writing."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_tf_script(script: str, *args: str) -> dict:
    """The JSON object a TensorFlow-side script (an oracle run as `python SCRIPT ARGS...`) prints last."""
    proc = subprocess.run(
        [sys.executable, script, *args], capture_output=True, text=True, env=env_for_tf(), timeout=300, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{os.path.basename(script)} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])

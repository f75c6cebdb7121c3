"""Write a test program's dump afresh several times under different CPU conditions, and say how many distinct trace
orders came out: a test-only tool for finding the tests that hold on one recording and fail on another (a real dump
is not the same twice: tf.data's threads, replicas and inter-op threads decide the order of its records).

    PYTHONPATH=. python tests/fresh_dumps.py PROGRAM[,ARG...] [--times 6] [--tag T]

Each dump is written through tests/dumps.py with DBG_TEST_DUMP_SALT=T-PROGRAM-ARGS-<condition>-<i>, so a pytest run
with that salt reads it (printed). The conditions cycle through: default; pinned to core 0 (`taskset -c 0`); the
other core busy (a `yes` pinned to core 1, stopped after); both cores busy (two `yes`). Not run by pytest.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator

import dumps

CONDITIONS = ("default", "taskset0", "busy1", "busy01")


@contextlib.contextmanager
def _busy(cores: tuple[int, ...]) -> Iterator[None]:
    """A `yes > /dev/null` pinned to each of CORES while the block runs (stopped by its own pid after)."""
    procs = [subprocess.Popen(["taskset", "-c", str(c), "yes"], stdout=subprocess.DEVNULL) for c in cores]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def write(name: str, args: tuple[str, ...], salt: str, condition: str) -> str:
    """The dump written under CONDITION with SALT (a subprocess calling dumps.make_dump, pinned when asked)."""
    env = dict(os.environ, **{dumps.SALT_ENV: salt})
    code = "import sys, dumps; print(dumps.make_dump(sys.argv[1], *sys.argv[2:]))"
    cmd = [sys.executable, "-c", code, name, *args]
    cmd = ["taskset", "-c", "0", *cmd] if condition == "taskset0" else cmd
    cores = {"busy1": (1,), "busy01": (0, 1)}.get(condition, ())
    with _busy(cores):
        out = subprocess.run(
            cmd, env=env, cwd=os.path.dirname(__file__), capture_output=True, text=True, timeout=900, check=True
        )
    return out.stdout.strip().splitlines()[-1]


def trace_order(dump: str) -> tuple[list[str], list[str]]:
    """The dump's graph-execution traces as `op_name:slot@device` in file order, and those with a non-finite value."""
    from run_helpers import only_run

    run = only_run(dump)
    arrays = run.trace_arrays()
    names = []
    for k in arrays["kind"]:
        _graph, op_name, slot, _mode, device = run.kind_info(int(k))
        names.append(f"{op_name}:{slot}@{device}")
    return names, [names[int(r)] for r in arrays["nonfinite_rows"]]


def _digest(items: list[str]) -> str:
    return hashlib.sha1("\n".join(items).encode()).hexdigest()[:10]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("program", help="NAME or NAME,ARG,ARG")
    parser.add_argument("--times", type=int, default=6)
    parser.add_argument("--tag", default="fresh")
    opts = parser.parse_args()
    name, *args = opts.program.split(",")
    orders, contents = set(), set()
    for i in range(opts.times):
        condition = CONDITIONS[i % len(CONDITIONS)]
        salt = "-".join([opts.tag, name, *args, condition, str(i)])
        dump = write(name, tuple(args), salt, condition)
        try:
            names, bad = trace_order(dump)
        except (AssertionError, OSError, ValueError) as e:  # a capsule, or a folder of several runs
            print(f"{salt}\tno single tfdbg run to order ({e!r:.80})", flush=True)
            continue
        orders.add(_digest(names))
        contents.add(_digest(sorted(names)))
        print(
            f"{salt}\t{len(names)} traces\torder {_digest(names)}\tmultiset {_digest(sorted(names))}"
            f"\tfirst non-finite {bad[:1]}",
            flush=True,
        )
    print(f"{opts.program}: {opts.times} dumps, {len(orders)} distinct orders, {len(contents)} distinct trace sets")


if __name__ == "__main__":
    main()

"""`python -m tensorboard_plugin_dbg.demo`: write the buggy MLP's NaN dump, then serve TensorBoard on it.

Prints the URL of the Debugger tab. Needs the `demo` extra (TensorFlow CPU, scikit-learn).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys

# The `demo` extra's modules (pyproject.toml) and the package each comes from.
EXTRA_MODULES = (("tensorflow", "tensorflow-cpu"), ("sklearn", "scikit-learn"))
EXTRA_HINT = 'pip install "tensorboard-plugin-dbg[demo]" (from a checkout: pip install ".[demo]")'


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

    dump_dir = os.path.join(args.logdir, "buggy_mlp")
    shutil.rmtree(dump_dir, ignore_errors=True)
    print(f"demo: training the buggy MLP for {args.steps} steps, dumping to {dump_dir} ...", flush=True)
    # A child process, so that TensorFlow's dump writer is closed and flushed before TensorBoard starts.
    trained = subprocess.run(
        [
            sys.executable,
            "-m",
            "tensorboard_plugin_dbg.demo.buggy_mlp",
            dump_dir,
            "--steps",
            str(args.steps),
            "--tensor-debug-mode",
            args.tensor_debug_mode,
            "--circular-buffer-size",
            "-1",
        ],
        check=False,
    )
    if trained.returncode != 0:
        print(f"demo: the training program failed (exit {trained.returncode}); its error is above", file=sys.stderr)
        return trained.returncode
    if args.no_tensorboard:
        return 0
    url = f"http://{args.host}:{args.port}/#dbg"
    print(f"demo: open {url}  (Ctrl-C to stop)", flush=True)
    tensorboard = [
        sys.executable,
        "-m",
        "tensorboard.main",
        "--logdir",
        args.logdir,
        "--host",
        args.host,
        "--port",
        str(args.port),
    ]
    try:
        return subprocess.call(tensorboard)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())

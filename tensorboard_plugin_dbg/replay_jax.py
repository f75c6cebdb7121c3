"""`python -m tensorboard_plugin_dbg.replay_jax SCRIPT ARGS` (or `-m MODULE ARGS`): the launcher `replay` runs a
capsule from Keras on JAX through (replay_cli.py). It hands the capsule's replay (capsule/jax_replay.py) the JAX
writer's enable and disable calls, which the capsule, training-side code importing wire/, reader/ and writer/ only,
cannot import itself; then runs the program as `python SCRIPT ARGS` would (`__main__`, sys.argv, sys.path[0])."""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Mapping

LAUNCHER = "tensorboard_plugin_dbg.replay_jax"


def is_jax(manifest: Mapping[str, object]) -> bool:
    """Whether a capsule was captured by Keras on the JAX backend (its manifest's versions say so)."""
    versions = manifest.get("versions")
    return isinstance(versions, dict) and versions.get("keras_backend") == "jax"


def launched(command: list[str]) -> list[str]:
    """A Python command (`python train.py ...`, `python -m pkg.train ...`) run through this launcher; any other
    command as it is (the program then says it cannot replay, and why)."""
    if len(command) < 2 or not os.path.basename(command[0]).startswith("python"):
        return command
    if command[1] == "-m" or not command[1].startswith("-"):
        return [command[0], "-m", LAUNCHER, *command[1:]]
    return command


def main(argv: list[str]) -> None:
    from tensorboard_plugin_dbg.capsule import jax_replay
    from tensorboard_plugin_dbg.jax import disable_dump_debug_info, enable_dump_debug_info

    jax_replay.WRITER.update(enable=enable_dump_debug_info, disable=disable_dump_debug_info)
    if argv[:1] == ["-m"] and len(argv) > 1:
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv:
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")
    else:
        raise SystemExit("usage: python -m tensorboard_plugin_dbg.replay_jax SCRIPT ARGS | -m MODULE ARGS")


if __name__ == "__main__":
    main(sys.argv[1:])

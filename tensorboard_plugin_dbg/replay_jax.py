"""`python -m tensorboard_plugin_dbg.replay_jax SCRIPT ARGS` (or `-m MODULE ARGS`): the launcher `replay` runs a
capsule from Keras on JAX through (replay_cli.py, replay_launch.py). It hands the capsule's replay
(capsule/jax_replay.py) the JAX writer's enable and disable calls, which the capsule, training-side code importing
wire/, reader/ and writer/ only, cannot import itself; then runs the program as `python SCRIPT ARGS` would (`__main__`,
sys.argv, sys.path[0]). Only ever run as the replay's child process: importing it imports JAX."""

from __future__ import annotations

import os
import runpy
import sys

from tensorboard_plugin_dbg.capsule import jax_replay
from tensorboard_plugin_dbg.jax import disable_dump_debug_info, enable_dump_debug_info


def main(argv: list[str]) -> None:
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

"""Which capsules replay through the JAX launcher (replay_jax.py), and the command that runs one: the viewer's side
of it, importing neither JAX nor TensorFlow."""

from __future__ import annotations

import os
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

"""A NaN capsule's manifest in words: its trigger, where in training it was, and the command that replays it. The
training side says them at capture (capsule/announce.py), `report` and the dashboard's capsule card say the same
(analysis/capsule_text.py): one wording, one replay command, whoever prints it."""

from __future__ import annotations

import shlex
from typing import Any

PACKAGE = "tensorboard_plugin_dbg"


def trigger_text(trigger: dict[str, Any]) -> str:
    """'gradient of dense/kernel: 16 NaN of 80' / 'loss: 1 NaN of 1' / a spike rule's own words ('loss spike: 4.8e6 vs
    max 2.1 over the last 100 steps')."""
    if trigger.get("text"):
        return str(trigger["text"])
    health = trigger.get("health") or {}
    counts = [
        f"{health[k]} {w}" for k, w in (("nan", "NaN"), ("pos_inf", "+inf"), ("neg_inf", "-inf")) if health.get(k)
    ]
    what = "loss" if trigger.get("kind") == "loss" else f"gradient of {trigger.get('name')}"
    more = len(trigger.get("all") or []) - 1
    others = f" (and {more} more non-finite)" if more > 0 else ""
    return f"{what}: {', '.join(counts) or 'non-finite'} of {health.get('size', '?')}{others}"


def where_text(manifest: dict[str, Any]) -> str:
    parts = [f"step {manifest.get('step')}"]
    for key, word in (("epoch", "epoch"), ("batch_index", "batch")):
        if manifest.get(key) is not None:
            parts.append(f"{word} {manifest[key]}")
    return ", ".join(parts)


def replay_command(folder: str, manifest: dict[str, Any]) -> str:
    """The command that replays this capsule: the program as it was started, from the folder it was started in,
    with the interpreter it ran under for both the replay tool and the program (a bare `python` may be another
    environment, without the program's packages)."""
    program = manifest.get("program") or {}
    python = program.get("executable") or "python"
    argv = [python, *(program.get("argv") or ["train.py"])]
    command = f"{shlex.quote(python)} -m {PACKAGE} replay {shlex.quote(folder)} -- {shlex.join(argv)}"
    cwd = program.get("cwd")
    return f"cd {shlex.quote(cwd)} && {command}" if cwd else command

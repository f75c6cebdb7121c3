"""A NaN capsule's manifest in words: its trigger, where in training it was, and the command that replays it. The
training side says them at capture (capsule/announce.py), `report` and the dashboard's capsule card say the same
(analysis/capsule_text.py): one wording, one replay command, whoever prints it."""

from __future__ import annotations

import shlex
import sys

from tensorboard_plugin_dbg.reader.capsule_manifest import Manifest, Trigger

PACKAGE = "tensorboard_plugin_dbg"


def trigger_text(trigger: Trigger) -> str:
    """'gradient of dense/kernel: 16 NaN of 80' / 'loss: 1 NaN of 1' / a spike rule's own words ('loss spike: 4.8e6 vs
    max 2.1 over the last 100 steps')."""
    if trigger.get("text"):
        return str(trigger["text"])
    health = trigger.get("health") or {}
    said = ((health.get("nan"), "NaN"), (health.get("pos_inf"), "+inf"), (health.get("neg_inf"), "-inf"))
    counts = [f"{n} {w}" for n, w in said if n]
    what = "loss" if trigger.get("kind") == "loss" else f"gradient of {trigger.get('name')}"
    more = len(trigger.get("all") or []) - 1
    others = f" (and {more} more non-finite)" if more > 0 else ""
    return f"{what}: {', '.join(counts) or 'non-finite'} of {health.get('size', '?')}{others}"


def where_text(manifest: Manifest) -> str:
    parts = [f"step {manifest.get('step')}"]
    for value, word in ((manifest.get("epoch"), "epoch"), (manifest.get("batch_index"), "batch")):
        if value is not None:
            parts.append(f"{word} {value}")
    return ", ".join(parts)


def replay_command(folder: str, manifest: Manifest) -> str:
    """The command that replays this capsule, as the training program says it at capture (its own program, in its
    own terminal): the program as it was started, from the folder it was started in, with the interpreter it ran
    under for both the replay tool and the program (a bare `python` may be another environment, without the
    program's packages). A viewer offers `review_command` instead: the capsule may come from someone else."""
    program = manifest.get("program") or {}
    python = program.get("executable") or "python"
    argv = [python, *(program.get("argv") or ["train.py"])]
    command = f"{shlex.quote(python)} -m {PACKAGE} replay {shlex.quote(folder)} -- {shlex.join(argv)}"
    cwd = program.get("cwd")
    return f"cd {shlex.quote(cwd)} && {command}" if cwd else command


def review_command(folder: str) -> str:
    """The replay command a viewer offers for a capsule (the card's "Copy replay command", `report`, the logdir's
    notice): this interpreter's replay tool on the folder and nothing taken from the manifest — no `--` (the command
    after it runs unasked) and not the recorded interpreter or folder. Pasted, `replay` prints the recorded command,
    folder and variables and runs them only once the user says yes."""
    return f"{shlex.quote(sys.executable)} -m {PACKAGE} replay {shlex.quote(folder)}"

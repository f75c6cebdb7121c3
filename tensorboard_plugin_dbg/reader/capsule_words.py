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
    replicas = replica_text(manifest.get("replicas"))
    return ", ".join(parts + ([replicas] if replicas else []))


def replica_text(replicas: object) -> str | None:
    """Which replica(s) of a tf.distribute step went non-finite (the manifest's `replicas`, checked: a capsule may
    come from anyone), and which worker wrote this capsule when there were several."""
    if not isinstance(replicas, dict):
        return None
    bad, count = replicas.get("non_finite"), replicas.get("count")
    if not isinstance(bad, list) or not isinstance(count, int) or not all(isinstance(i, int) for i in bad):
        return None
    more = f" and {len(bad) - 8} more" if len(bad) > 8 else ""
    text = f"replica {', '.join(str(i) for i in bad[:8])}{more} of {count}" if bad else f"{count} replicas"
    worker, workers = replicas.get("worker"), replicas.get("workers")
    if isinstance(worker, int) and isinstance(workers, int) and workers > 1:
        peers = worker_capsules(replicas)
        text += f" (this capsule: worker {worker} of {workers}{'; with ' + ', '.join(peers) if peers else ''})"
    return text


def worker_capsules(replicas: object) -> list[str]:
    """The other workers' capsule folders of the same step that worker 0's manifest names (names, never paths)."""
    names = replicas.get("worker_capsules") if isinstance(replicas, dict) else None
    if not isinstance(names, list):
        return []
    return [
        n for n in names[:64] if isinstance(n, str) and n and "/" not in n and "\\" not in n and n not in (".", "..")
    ]


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

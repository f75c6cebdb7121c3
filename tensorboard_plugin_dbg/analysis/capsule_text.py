"""What a NaN capsule says, as text: its trigger, where in training it was, the replay's verdict, and the command
that replays it. `report` prints it for each capsule under its folder, `replay` after re-running the step, and the
dashboard's capsule card carries the same words."""

from __future__ import annotations

import shlex
from typing import Any

from tensorboard_plugin_dbg.reader import capsule_files, capsule_remote, storage

VERDICT_WORDS = {
    "reproduced": "reproduced (the step triggers again: the code or the data, not chance)",
    "not_reproduced": "NOT reproduced",
    "reproduced_only_under_xla": "reproduced only under XLA",
    "cannot_replay": "cannot replay",
}


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
    """The command that replays this capsule: the program as it was started, from the folder it was started in."""
    program = manifest.get("program") or {}
    argv = [program.get("executable") or "python", *(program.get("argv") or ["train.py"])]
    command = f"python -m tensorboard_plugin_dbg replay {shlex.quote(folder)} -- {shlex.join(argv)}"
    cwd = program.get("cwd")
    return f"cd {shlex.quote(cwd)} && {command}" if cwd else command


def verdict_text(verdict: dict[str, Any] | None) -> str:
    if verdict is None:
        return "not replayed yet"
    words = VERDICT_WORDS.get(str(verdict.get("verdict")), str(verdict.get("verdict")))
    reason = verdict.get("reason")
    return f"{words}: {reason}" if reason and not verdict.get("same_trigger") else words


def capsule_section(folder: str) -> str:
    """The lines `report` prints for one capsule folder (a damaged one says what is wrong)."""
    try:
        manifest = capsule_files.read_manifest(folder)
        capsule_files.check_files(folder, manifest)
    except capsule_files.CapsuleError as e:
        return f"capsule {folder}: DAMAGED: {e}\n"
    try:
        return _section(folder, manifest)
    except (KeyError, TypeError, ValueError, AttributeError) as e:  # the right version, unexpected fields
        return f"capsule {folder}: DAMAGED: unexpected content in its manifest ({type(e).__name__}: {e})\n"


def _section(folder: str, manifest: dict[str, Any]) -> str:
    lines = [
        f"capsule {folder}",
        f"  trigger: {trigger_text(manifest['trigger'])}",
        f"  at: {where_text(manifest)}",
        f"  replay: {verdict_text(capsule_files.read_verdict(folder))}",
    ]
    if capsule_files.read_verdict(folder) is None:
        lines.append(f"  replay it: {replay_command(folder, manifest)}")
    return "\n".join(lines) + "\n"


def report_capsules(logdir: str, out: Any) -> tuple[int, int]:
    """`report`'s capsule sections for every capsule under `logdir`: (capsules found, readable ones). A URL's
    capsules are read from a temporary local copy; the sections name them by their URLs."""
    if storage.is_remote(logdir):
        url = storage.normalize(logdir)
        with capsule_remote.local_copy(url) as local:
            return report_capsules(local, _Renamed(out, local, url))
    folders = capsule_files.capsules_below(logdir)
    readable = 0
    for folder in folders:
        section = capsule_section(folder)
        readable += "DAMAGED" not in section.splitlines()[0]
        out.write(section + "\n")
    return len(folders), readable


class _Renamed:
    """An output that writes a local copy's folder as the URL it was copied from."""

    def __init__(self, out: Any, local: str, url: str) -> None:
        self.out, self.local, self.url = out, local, url.rstrip("/")

    def write(self, text: str) -> None:
        self.out.write(text.replace(self.local, self.url))

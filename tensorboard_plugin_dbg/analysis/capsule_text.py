"""What a NaN capsule says, as text: its trigger, where in training it was, the replay's verdict, and the command
that replays it. `report` prints it for each capsule under its folder, `replay` after re-running the step, and the
dashboard's capsule card carries the same words."""

from __future__ import annotations

from typing import Any

from tensorboard_plugin_dbg.analysis import capsule_layers, capsule_rows
from tensorboard_plugin_dbg.reader import capsule_files, capsule_remote, storage
from tensorboard_plugin_dbg.reader.capsule_manifest import Manifest, Verdict
from tensorboard_plugin_dbg.reader.capsule_words import (
    replica_text,
    review_command,
    trigger_text,
    where_text,
    worker_capsules,
)

__all__ = ["capsule_section", "report_capsules", "review_command", "trigger_text", "verdict_text", "where_text"]

VERDICT_WORDS = {
    "reproduced": "reproduced (the step triggers again: the code or the data, not chance)",
    "not_reproduced": "NOT reproduced",
    "reproduced_only_under_xla": "reproduced only under XLA",
    "cannot_replay": "cannot replay",
}


def verdict_text(verdict: Verdict | None) -> str:
    if verdict is None:
        return "not replayed yet"
    words = VERDICT_WORDS.get(str(verdict.get("verdict")), str(verdict.get("verdict")))
    reason = verdict.get("reason")
    trigger = verdict.get("trigger") or {}
    spike = trigger.get("kind") in ("loss_spike", "grad_spike")  # said even when the same: the dump stays finite
    text = f"{words}: {reason}" if reason and (spike or not verdict.get("same_trigger")) else words
    replicas = verdict.get("replicas")  # a tf.distribute capsule: with the run's replicas, or one replica's rows
    return f"{text} ({replicas})" if isinstance(replicas, str) and replicas not in text else text


def replica_suffix(manifest: Manifest) -> str:
    """' on replica 1 of 2' for a card's trigger under tf.distribute (with the worker and the same step's other
    workers' capsules under MultiWorkerMirroredStrategy: the dashboard shows them as one event)."""
    text = replica_text(manifest.get("replicas"))
    return f" on {text}" if text else ""


def capsule_section(folder: str, listed: dict[str, int] | None = None) -> str:
    """The lines `report` prints for one capsule folder (a damaged one says what is wrong). `listed`: the listing of
    a URL's capsules (its sizes stand for the files: only the manifest and the verdict are fetched)."""
    try:
        manifest = capsule_files.read_manifest(folder)
        if listed is None:
            capsule_files.check_files(folder, manifest)
        else:
            capsule_files.check_listed_files(folder, manifest, listed)
    except capsule_files.CapsuleError as e:
        return f"capsule {folder}: DAMAGED: {e}\n"
    try:
        return _section(folder, manifest)
    except (KeyError, TypeError, ValueError, AttributeError) as e:  # the right version, unexpected fields
        return f"capsule {folder}: DAMAGED: unexpected content in its manifest ({type(e).__name__}: {e})\n"


def _section(folder: str, manifest: Manifest) -> str:
    lines = [
        f"capsule {folder}",
        f"  trigger: {trigger_text(manifest['trigger'])}",
        f"  at: {where_text(manifest)}",
        f"  replay: {verdict_text(capsule_files.read_verdict(folder))}",
        f"  per-sample loss: {capsule_rows.sentence(capsule_rows.per_sample_loss(folder, manifest), manifest)}",
        f"  previous step's per-sample loss: {capsule_rows.previous_sentence(folder, manifest)}",
        f"  layers: {capsule_layers.sentence(capsule_layers.history(folder, manifest), manifest)}",
    ]
    if capsule_files.read_verdict(folder) is None:
        lines.append(f"  replay it: {review_command(folder)}")
    return "\n".join(lines) + "\n"


def report_capsules(logdir: str, out: Any) -> tuple[int, int]:
    """`report`'s capsule sections for every capsule under `logdir`: (capsules found, readable ones). A URL's
    capsules are read from a temporary local copy; the sections name them by their URLs."""
    listed = None
    if storage.is_remote(logdir):  # read in place: the manifests and verdicts, the sizes from the one listing
        url = storage.normalize(logdir)
        listed = storage.list_files(url)
        refused = storage.refused_notice(url)  # keys that could name a path outside its folder: never read
        if refused:
            out.write(f"notice: {refused}\n\n")
        folders = sorted(capsule_remote.capsule_files_under(url, listed))
    else:
        folders = capsule_files.capsules_below(logdir)
    readable = 0
    events = _worker_events(folders)
    peers = {peer for group in events.values() for peer in group}
    for folder in [f for f in folders if f not in peers]:
        group = [folder, *events.get(folder, [])]
        if len(group) > 1:  # MultiWorkerMirroredStrategy: one capsule per worker of the same step, one event
            out.write(f"one event, {len(group)} workers' capsules of the same step:\n")
        for member in group:
            section = capsule_section(member, listed)
            readable += "DAMAGED" not in section.splitlines()[0]
            out.write(section + "\n")
    return len(folders), readable


def _worker_events(folders: list[str]) -> dict[str, list[str]]:
    """Worker 0's capsule -> the other workers' capsules of that step it names, found beside it."""
    events = {}
    for folder in folders:
        try:
            names = worker_capsules(capsule_files.read_manifest(folder).get("replicas"))
        except capsule_files.CapsuleError:
            continue
        parent = folder.rsplit("/", 1)[0]
        found = [f for f in folders if f.rsplit("/", 1)[0] == parent and f.rsplit("/", 1)[-1] in names]
        if found:
            events[folder] = found
    return events

"""The status line of a logdir that holds NaN capsules and no tfdbg2 dump yet (a capsule folder before its replay):
"1 NaN capsule, not replayed: run …" with the command that replays it, instead of "No tfdbg2 dump found"."""

from __future__ import annotations

from tensorboard_plugin_dbg.reader import capsule_files, storage
from tensorboard_plugin_dbg.reader.capsule_words import review_command
from tensorboard_plugin_dbg.wire import types as wire


def local_capsules(logdir: str) -> list[str]:
    """The capsule folders under a local logdir (none for a URL: the capsule cards read those in place)."""
    if not logdir or storage.is_remote(logdir):
        return []
    try:
        return capsule_files.capsules_below(logdir)
    except OSError:
        return []


def capsules_notice(logdir: str) -> wire.Notice | None:
    """The logdir's capsules in one line, or None when it holds none."""
    folders = local_capsules(logdir)
    if not folders:
        return None
    waiting = [f for f in folders if capsule_files.read_verdict(f) is None]
    count = f"{len(folders)} NaN capsule{'s' if len(folders) > 1 else ''}"
    if not waiting:
        message = f"{count}, replayed: its replay's dump is being read (Capsules… shows the card)."
    else:
        try:  # replay shows what the manifest names and asks before running it: nothing of it in the command
            command = review_command(waiting[0]) if capsule_files.read_manifest(waiting[0]) else ""
        except capsule_files.CapsuleError as e:
            command = f"(damaged: {e})"
        which = "not replayed" if len(folders) == 1 else f"{len(waiting)} not replayed"
        message = f"{count}, {which}: run {command}"
    return {"code": "capsules", "severity": "info", "message": message}

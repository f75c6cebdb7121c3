"""Says it when it happens: at a capture, one block on stderr naming what went non-finite, where in training, what
the loop did about it, the capsule folder and the exact command that replays it (the interpreter that is running,
as the dashboard's card and `report` print it: reader/capsule_words.py). A `fit` that stops early on a NaN otherwise
ends with exit 0 and a finite logged loss, and nothing says that a capsule was written.

The block is read back from the manifest just written (so it says what the capsule holds), kept in
`NanCapsule.announcements` and, after `fit`, on the History it returns (`history.nan_capsules`: one dict per
capture, its `text` the block)."""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from typing_extensions import TypedDict

from tensorboard_plugin_dbg.reader import capsule_files
from tensorboard_plugin_dbg.reader.capsule_manifest import Manifest
from tensorboard_plugin_dbg.reader.capsule_words import replay_command, trigger_text, where_text

_SHOWN = 4  # non-finite items listed after the trigger
_WHAT_NEXT = {
    "stop": "update not applied; training stopped",
    "skip": "update not applied; batch skipped, training goes on (each skipped batch: {skips})",
    "raise": "update not applied; NanCapsuleError raised after the step",
}


class Announcement(TypedDict):
    """What the block said at one capture (kept on the History fit returns: `history.nan_capsules`)."""

    folder: str
    step: int | None
    replay_command: str
    text: str


def capture(folder: str, out: TextIO | None = None) -> Announcement:
    """Writes the block for the capsule at `folder` to stderr (or `out`) and returns what it said."""
    manifest = capsule_files.read_manifest(folder)
    text = block(folder, manifest)
    stream = out if out is not None else sys.stderr
    stream.write(text)
    stream.flush()
    return {
        "folder": folder,
        "step": manifest.get("step"),
        "replay_command": replay_command(folder, manifest),
        "text": text,
    }


def block(folder: str, manifest: Manifest) -> str:
    trigger = manifest.get("trigger") or {}
    said = "" if trigger.get("kind") in ("loss_spike", "grad_spike") else "non-finite "  # a spike is finite
    lines = [f"NanCapsule: {said}{trigger_text(trigger)} at {where_text(manifest)}"]
    also = [trigger_text({**item, "all": []}) for item in (trigger.get("all") or [])[1:]]
    if also:
        more = f", and {len(also) - _SHOWN:,} more" if len(also) > _SHOWN else ""
        lines.append("  also non-finite: " + "; ".join(also[:_SHOWN]) + more)
    skips = os.path.join(os.path.dirname(folder), "skipped.jsonl")
    lines.append("  " + _WHAT_NEXT.get(str(manifest.get("on_nan")), "update not applied").format(skips=skips))
    lines.append(f"  capsule: {folder}")
    missing = manifest.get("batch_missing")  # an XLA batch its buffer could not hold: `replay` would only refuse
    lines.append(
        f"  cannot be replayed: the capsule holds no batch ({missing})"
        if missing
        else f"  replay it: {replay_command(folder, manifest)}"
    )
    lines.append(f"  then: tensorboard --logdir {os.path.dirname(folder)}  (the Debugger opens on the capsule)")
    return "\n".join(lines) + "\n"


def into_history(model: Any, said: list[Announcement]) -> None:
    """After fit: the blocks said during it, on the History fit returns (`history.nan_capsules`)."""
    history = getattr(model, "history", None)
    if history is not None and said:
        history.nan_capsules = list(said)

"""The replay of a NaN capsule knows its batch: the model's inputs in the replayed step are the arrays of the
capsule's `batch.npz`, so their health and values are read from there instead of "cannot be known".

A replay dump sits at `CAPSULE/replay/` (capsule/replay_mode.py); TensorFlow does not trace a tf.function's input
Placeholders and the batch was handed in as numpy data, so the dump alone has no record of it. For a capsule
captured in Keras's `fit`, the replayed train function is called eagerly with the batch, its Placeholders in
creation order are the batch's leaves in flatten order (capsule/structure.py: the same order as tf.nest), so input
`data_1:0` of a top-level function is leaf 1 (`y`). Custom loops are left alone (their function may take other
arguments than the batch).

What the producer then gets: each such input's health (counts of the captured array), `inputs_known`, and one
sentence (`capsule_batch`): the NaN came with the batch, naming the first non-finite element and its sample, or the
producer received a finite value outside its domain (a negative into Log), naming it and its value.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from tensorboard_plugin_dbg.analysis import explain, links, root_cause
from tensorboard_plugin_dbg.analysis.health import describe
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.reader import capsule_arrays, capsule_files
from tensorboard_plugin_dbg.reader.capsule_manifest import Manifest
from tensorboard_plugin_dbg.wire import types as wire

REPLAY_FOLDER = "replay"  # capsule/replay_mode.py writes the replay's dump there
# Finite inputs outside an op's domain: which elements make its output non-finite.
_OUTSIDE = {
    "Log": lambda x: x <= 0,
    "Sqrt": lambda x: x < 0,
    "Rsqrt": lambda x: x <= 0,
    "Log1p": lambda x: x <= -1,
    "Reciprocal": lambda x: x == 0,
    "Inv": lambda x: x == 0,
    "Acos": lambda x: np.abs(x) > 1,
    "Asin": lambda x: np.abs(x) > 1,
    "Atanh": lambda x: np.abs(x) >= 1,
}
# The same for JAX's primitives, the op types of a JAX replay's dump (jax/instrument.py): lax.log, lax.sqrt...
_OUTSIDE |= {tf.lower(): _OUTSIDE[tf] for tf in ("Log", "Sqrt", "Rsqrt", "Log1p", "Acos", "Asin", "Atanh")}


def capsule_of(run: RunQueries) -> str | None:
    """The capsule folder whose replay dump `run` is, or None (a remote dump, or any other run)."""
    directory = run.directory
    if "://" in directory or os.path.basename(os.path.normpath(directory)) != REPLAY_FOLDER:
        return None
    folder = os.path.dirname(os.path.normpath(directory))
    return folder if capsule_files.is_capsule(folder) else None


def with_batch(run: RunQueries, rc: wire.RootCauseResponseBody) -> wire.RootCauseResponseBody:
    """`rc` with its producer's batch inputs read from the capsule (unchanged outside a capsule's replay)."""
    p = rc["producer"]
    folder = capsule_of(run) if p is not None else None
    if p is None or folder is None:
        return rc
    try:  # not cached: the producer depends on the request's mutes; this reads one manifest and the batch
        amended = _amend(run, folder, p)
    except (capsule_files.CapsuleError, OSError):
        return rc  # a damaged capsule: the replay's own analysis stands
    said = amended.get("capsule_batch") if amended is not None else None
    if amended is None or not said:
        return {**rc, "producer": amended} if amended is not None else rc
    # The message said the inputs "cannot be known": said again from the batch (a replay keeps every record)
    without_inputs: wire.RootCauseProducer = {**amended, "inputs": []}  # the sentence below says them
    message = explain.found_message(without_inputs, rc["skipped"], rc["first_kept"], 0)
    return {**rc, "producer": amended, "message": f"{message} {said[0].upper()}{said[1:]}."}


def _amend(run: RunQueries, folder: str, p: wire.RootCauseProducer) -> wire.RootCauseProducer | None:
    manifest = capsule_files.read_manifest(folder)
    if manifest.get("source") != "fit" or not p["graph_id"] or not _called_eagerly(run, p):
        return None
    leaves = _leaf_names(manifest["batch_structure"])
    placeholders = links.function_inputs(run, p["graph_id"])
    located = capsule_arrays.locate_group(folder, manifest, "batch")
    inputs, read = [], []
    for inp in p["inputs"]:
        k = placeholders.index(inp["op_name"]) if inp["op_name"] in placeholders else -1
        if inp["traced"] or not 0 <= k < len(leaves) or leaves[k] not in located:
            inputs.append(inp)
            continue
        values = capsule_arrays.read_whole(located[leaves[k]])
        health = _health(values)
        read.append((leaves[k], values))
        where = f"the captured batch's `{leaves[k]}` (batch.npz)"
        described = f"{inp['op_name']}:{int(inp['output_slot'])} — {where}: {describe(health)}"
        inputs.append({**inp, "traced": True, "health": health, "description": described, "linked": True})
    if not read:
        return None
    known = all(i["traced"] or i.get("linked") for i in inputs)
    sentence = _sentence(p, read, manifest)
    amended: wire.RootCauseProducer = {**p, "inputs": inputs, "inputs_known": known}
    if known:
        amended["role"] = "producer"
    if sentence:
        amended["capsule_batch"] = sentence
    return amended


def _sentence(p: wire.RootCauseProducer, read: list[tuple[str, np.ndarray]], manifest: Manifest) -> str | None:
    """The NaN came with the batch (its first non-finite element), or the op received a finite value outside its
    domain (the first such element and its value)."""
    place = f"batch {manifest.get('batch_index', '?')} of epoch {manifest.get('epoch', '?')}"
    for name, values in read:
        bad = np.argwhere(~np.isfinite(values)) if values.dtype.kind == "f" else np.zeros((0, values.ndim))
        if len(bad):
            first = tuple(int(i) for i in bad[0])
            kind = "NaN" if np.isnan(values[first]) else "∞"
            more = f"; {len(bad) - 1:,} more non-finite element(s)" if len(bad) > 1 else ""
            sample = f"sample {first[0]}, " if first else ""
            return f"the {kind} came with the batch: {_at(name, first)} ({sample}{place}){more}"
    outside = _OUTSIDE.get(p["op_type"])
    if outside is None:
        return None
    for name, values in read:
        bad = np.argwhere(outside(values))
        if len(bad):
            first = tuple(int(i) for i in bad[0])
            frame = p["user_frame"]
            line = f" at {os.path.basename(str(frame.get('path') or '?'))}:{frame['line']}" if frame else ""
            value = np.format_float_positional(values[first], trim="0")
            more = f"; {len(bad) - 1:,} more such element(s)" if len(bad) > 1 else ""
            return f"{p['op_type']}{line} received {_at(name, first)} = {value} ({place}){more}"
    return None


def pointed_rows(p: wire.RootCauseProducer, name: str, values: np.ndarray) -> tuple[np.ndarray | None, str | None]:
    """(per sample of batch array `name`, whether it holds an element the root cause points at; the sentence), or
    (None, None) when the replay's producer does not read that array."""
    sentence = p.get("capsule_batch")
    linked = " ".join(str(i.get("description")) for i in p["inputs"] if i.get("linked"))
    if not sentence or f"the captured batch's `{name}`" not in linked:
        return None, None
    rows = values.reshape(len(values), -1) if values.ndim else values.reshape(1, 1)
    if "came with the batch" in sentence:
        bad = ~np.isfinite(rows) if rows.dtype.kind == "f" else np.zeros(rows.shape, bool)
    else:
        outside = _OUTSIDE.get(p["op_type"])
        if outside is None:
            return None, None
        bad = outside(rows)
    return np.asarray(np.asarray(bad).any(axis=1)), sentence


def _at(name: str, position: tuple[int, ...]) -> str:
    return f"{name}[{', '.join(str(i) for i in position)}]" if position else name


def _health(values: np.ndarray) -> wire.HealthFull:
    floats = values.dtype.kind == "f"
    finite = values[np.isfinite(values)] if floats else values
    return {
        "mode": "FULL_HEALTH",
        "dtype": str(values.dtype),
        "device_id": -1,
        "tensor_id": -1,
        "rank": values.ndim,
        "size": int(values.size),
        "nan": int(np.count_nonzero(np.isnan(values))) if floats else 0,
        "pos_inf": int(np.count_nonzero(np.isposinf(values))) if floats else 0,
        "neg_inf": int(np.count_nonzero(np.isneginf(values))) if floats else 0,
        "neg": int(np.count_nonzero(finite < 0)),
        "zero": int(np.count_nonzero(finite == 0)),
        "pos": int(np.count_nonzero(finite > 0)),
    }


def _leaf_names(spec: Any) -> list[str]:
    """The batch's leaf names in flatten order (capsule/structure.py's walk)."""
    if not isinstance(spec, dict):
        return []
    if spec.get("kind") == "array":
        return [str(spec.get("name"))]
    items = spec.get("items") or []
    if spec.get("kind") == "dict":
        return [name for _key, item in items for name in _leaf_names(item)]
    return [name for item in items for name in _leaf_names(item)]


def _called_eagerly(run: RunQueries, p: wire.RootCauseProducer) -> bool:
    """True when the producer ran in an eager call of its function (whose inputs are then what the replay passed
    in: the batch), not in a function called from inside another one."""
    cols = root_cause.columns_if_ready(run)
    alert = p["alert"]
    if cols is None or alert["source"] != "graph_execution" or not p["graph_id"]:
        return False
    return links.caller_of(run, cols, p["graph_id"], int(alert["source_index"])) is not None


leaf_names = _leaf_names  # the batch's leaf names in flatten order, for analysis/spike_cause.py too

"""Flattening a batch (any nesting of dicts, tuples, lists and None around tensors) into named leaves and a JSON
spec of its nesting; reader/capsule_files.rebuild is the inverse. No TensorFlow: leaves are whatever the caller has
(symbolic tensors at trace time, numpy arrays when written)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from tensorboard_plugin_dbg.reader.capsule_manifest import BatchSpec

# TensorFlow tensors or variables, or JAX arrays and tracers, by name (the step's pre-step snapshot, the JAX step's
# carry and traced loss and gradients): each framework is imported lazily, in the training process only, so its types
# cannot be named here
Tensors = dict[str, Any]

# What Keras's data adapters hand train_step: (x,), (x, y) or (x, y, sample_weight)
FIT_NAMES = ("x", "y", "sample_weight")


def flatten(batch: Any, fit: bool = False) -> tuple[BatchSpec, list[tuple[str, Any]]]:
    """(spec, [(name, leaf), ...]) in a fixed order; `fit` names the top tuple's items x, y, sample_weight."""
    leaves: list[tuple[str, Any]] = []
    top_names = FIT_NAMES if fit and isinstance(batch, tuple) and len(batch) <= 3 else None
    spec = _walk(batch, "", leaves, top_names)
    if not leaves:
        raise ValueError("the batch holds no tensor")
    return spec, leaves


def _walk(value: Any, name: str, leaves: list[tuple[str, Any]], names: tuple[str, ...] | None) -> BatchSpec:
    if value is None:
        return {"kind": "none"}
    if isinstance(value, dict):
        pairs: list[object] = [
            [key, _walk(value[key], _join(name, str(key)), leaves, None)] for key in sorted(value, key=str)
        ]
        return {"kind": "dict", "items": pairs}
    if isinstance(value, (tuple, list)):
        labels = names or tuple(str(i) for i in range(len(value)))
        items = [_walk(item, _join(name, labels[i]), leaves, None) for i, item in enumerate(value)]
        return {"kind": "tuple" if isinstance(value, tuple) else "list", "items": items}
    leaf_name = name or "batch"
    leaves.append((leaf_name, value))
    return {"kind": "array", "name": leaf_name}


def _join(prefix: str, key: str) -> str:
    key = key.replace("/", "_")  # '/' separates the levels in the names
    return f"{prefix}/{key}" if prefix else key


def unique_names(paths: list[str]) -> list[str]:
    """Variables' paths made unique (two variables may share a path): the later ones get '#2', '#3', ..."""
    seen: dict[str, int] = {}
    out = []
    for path in paths:
        seen[path] = seen.get(path, 0) + 1
        out.append(path if seen[path] == 1 else f"{path}#{seen[path]}")
    return out


class Flat(NamedTuple):
    """A batch already flattened (fit hands its leaves back from the compiled step): the spec and named leaves."""

    spec: BatchSpec
    leaves: list[tuple[str, Any]]


def arrays_of(batch: Any, fit: bool) -> tuple[BatchSpec, dict[str, np.ndarray]]:
    """(spec, {name: array}) of a batch as the host holds it: already flat (an XLA step's leaves) or as the program
    passed it."""
    spec, leaves = batch if isinstance(batch, Flat) else flatten(batch, fit)
    return spec, {name: np.asarray(leaf) for name, leaf in leaves}

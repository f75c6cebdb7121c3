"""Spike rules, off by default: `NanCapsule(directory, spike=10.0, grad_spike=10.0)`. A step whose |loss| (or global
gradient norm) is above `spike` times the largest of the last WINDOW applied steps is a trigger like a NaN (the rule
Megatron-LM's rerun state machine calls "spiky"). The window lives in device variables, updated in the cond's apply
branch (no host read per step); the first WINDOW applied steps arm the rule and never trigger it.

TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

import math
from typing import Any

from tensorboard_plugin_dbg.reader.capsule_manifest import Trigger

WINDOW = 100
KINDS = {"spike": ("loss_spike", "loss"), "grad_spike": ("grad_spike", "global gradient norm")}


def validated(name: str, factor: Any) -> float | None:
    """None (off) or a factor > 1; anything else is a ValueError naming the argument."""
    if factor is None:
        return None
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not math.isfinite(factor) or factor <= 1:
        raise ValueError(f"{name} must be a number above 1 (a factor over the window's largest value), not {factor!r}")
    return float(factor)


class SpikeRules:
    def __init__(self, spike: float | None, grad_spike: float | None) -> None:
        self.factors = {"spike": spike, "grad_spike": grad_spike}
        self.windows: dict[str, Any] = {}  # rule -> float32 [WINDOW] of the last applied steps' values (tf.Variable)
        self.seen: Any = None  # int64: applied steps so far
        self.at_trigger: Any = None  # float32 [2 * rules]: (value, window max) of each rule at the held trigger

    @property
    def on(self) -> bool:
        return any(f is not None for f in self.factors.values())

    def active(self) -> list[str]:
        return [r for r, f in self.factors.items() if f is not None]

    def manifest(self) -> dict[str, object]:
        return {
            "window": WINDOW,
            "spike": self.factors["spike"],
            "grad_spike": self.factors["grad_spike"],
            "rule": f"a trigger when |loss| (spike) or the global gradient norm (grad_spike) is above the factor times "
            f"the largest of the last {WINDOW} applied steps; the first {WINDOW} applied steps arm the rule",
        }

    def ensure(self) -> None:
        import tensorflow as tf

        with tf.init_scope():
            if self.seen is None:
                self.seen = tf.Variable(0, dtype=tf.int64, trainable=False, name="nan_capsule_spike_seen")
                self.at_trigger = tf.Variable(tf.zeros([4]), trainable=False, name="nan_capsule_spike_values")
                for rule in self.active():
                    self.windows[rule] = tf.Variable(tf.zeros([WINDOW]), trainable=False, name="nan_capsule_window")

    def measure(self, loss: Any, grads: list[Any], squares: Any = None) -> tuple[Any, dict[str, tuple[Any, Any]]]:
        """(whether the step is spiky, {rule: (value, window max)}), in the graph. `squares`: the per-layer ring's
        sum of squares / 2 over these gradients (capsule/layer_history.py), the global norm without a second sum."""
        import tensorflow as tf

        self.ensure()
        values: dict[str, tuple[Any, Any]] = {}
        if self.factors["spike"] is not None and loss is not None:
            values["spike"] = (tf.abs(tf.cast(loss, tf.float32)), tf.reduce_max(self.windows["spike"]))
        if self.factors["grad_spike"] is not None and grads:
            norm = (
                tf.sqrt(2.0 * squares)
                if squares is not None
                else tf.linalg.global_norm([tf.cast(g, tf.float32) for g in grads])
            )
            values["grad_spike"] = (norm, tf.reduce_max(self.windows["grad_spike"]))
        spiky = tf.constant(False)
        for rule, (value, largest) in values.items():
            factor = self.factors[rule]
            assert factor is not None
            spiky = tf.logical_or(spiky, value > factor * largest)
        return tf.logical_and(self.seen >= WINDOW, spiky), values

    def record(self, values: dict[str, tuple[Any, Any]]) -> Any:
        """In the apply branch: this step's values into the windows."""
        import tensorflow as tf

        index = tf.reshape(tf.math.floormod(self.seen, WINDOW), [1, 1])
        for rule, (value, _) in values.items():
            window = self.windows[rule]
            window.assign(tf.tensor_scatter_nd_update(window, index, tf.reshape(value, [1])))
        return self.seen.assign_add(1)

    def capture(self, values: dict[str, tuple[Any, Any]]) -> Any:
        import tensorflow as tf

        flat = []
        for rule in KINDS:
            flat += list(values.get(rule, (tf.constant(0.0), tf.constant(0.0))))
        return self.at_trigger.assign(tf.stack(flat))

    def trigger(self) -> Trigger | None:
        """The held trigger as a spike (host side), or None when no rule fired."""
        if not self.on:
            return None
        flat = [float(v) for v in self.at_trigger.numpy()]
        return self.fired({"spike": (flat[0], flat[1]), "grad_spike": (flat[2], flat[3])})

    def fired(self, values: dict[str, tuple[float, float]]) -> Trigger | None:
        for rule, (value, largest) in values.items():
            factor = self.factors[rule]
            if factor is not None and value > factor * largest:
                kind, what = KINDS[rule]
                text = f"{what} spike: {_short(value)} vs max {_short(largest)} over the last {WINDOW} steps"
                return {
                    "kind": kind,
                    "name": "loss" if rule == "spike" else "gradients",
                    "text": text,
                    "value": value,
                    "window_max": largest,
                    "factor": factor,
                    "threshold": factor * largest,
                    "window": WINDOW,
                    "health": {},
                    "all": [],
                }
        return None


def _short(value: float) -> str:
    return format(value, ".2g").replace("e+0", "e").replace("e+", "e")

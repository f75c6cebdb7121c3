"""Unit test (fakes): a replicated step held back with every replica's loss and gradients finite — each device decided
from the sum of its all-reduced gradients (capsule/local_decision.py), which went past float32's range — names that
overflow in its trigger, never a NaN or a "non-finite" count it does not have."""

from __future__ import annotations

import numpy as np
import pytest

from tensorboard_plugin_dbg.capsule import distribute, shadow
from tensorboard_plugin_dbg.reader import capsule_words


class _Flags:
    def __init__(self, flags: list[float]) -> None:
        self.flags = flags

    def numpy(self) -> np.ndarray:
        return np.array([self.flags, [4.0] * len(self.flags)], np.float32)


@pytest.fixture
def nothing_non_finite(monkeypatch):
    unknown = shadow.first_bad([("loss", "loss"), ("gradient", "dense/kernel")], [dict.fromkeys(shadow.HEALTH, 0)] * 2)
    monkeypatch.setattr(shadow.DeviceState, "trigger", lambda self: unknown)


def test_a_step_held_back_with_every_replica_finite_says_the_sum_went_past_float32(nothing_non_finite):
    state = distribute.ReplicaState(copy_all=False)
    state.replicas = _Flags([0.0, 0.0])
    trigger = state.trigger()
    text = capsule_words.trigger_text(trigger)
    assert "float32's range" in text and "every replica's loss and gradients finite" in text
    assert "NaN" not in text and "non-finite of" not in text


def test_another_workers_replica_is_still_named(nothing_non_finite):
    state = distribute.ReplicaState(copy_all=False)
    state.replicas = _Flags([0.0, 0.0, 1.0, 0.0])
    trigger = state.trigger()
    assert trigger["kind"] == "other_worker" and capsule_words.trigger_text(trigger).startswith("replica 2 of another")

"""tests/dumps.py, the one place that runs TensorFlow programs for the tests (issue #25): the caller's
TF_ENABLE_ONEDNN_OPTS reaches the program unchanged, and dumps written with oneDNN on, off or at the default never
share a cache entry (their counts differ: the CPU's kernels decide how many softmax outputs underflow)."""

from __future__ import annotations

import dumps
import pytest


@pytest.mark.parametrize("value", ["0", "1"])
def test_onednn_setting_passes_through_unchanged(monkeypatch, value):
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", value)
    assert dumps.env_for_tf()["TF_ENABLE_ONEDNN_OPTS"] == value


def test_onednn_unset_stays_unset(monkeypatch):
    monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
    assert "TF_ENABLE_ONEDNN_OPTS" not in dumps.env_for_tf()


def test_each_onednn_setting_has_its_own_cache_key(monkeypatch):
    keys = set()
    for value in ("0", "1", None):
        if value is None:
            monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
        else:
            monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", value)
        keys.add(dumps._key("demo", ()))
        assert dumps._key("demo", ()) in keys  # the same setting: the same key
    assert len(keys) == 3

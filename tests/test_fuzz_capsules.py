"""Fuzzed capsules (docs/THREAT_MODEL.md: capsules come from others), as tests/test_fuzz_dumps.py does for dumps: a
small capsule written by the writer, then its manifest (a field replaced by any JSON value, deleted, or nested deep)
or one of its .npz files (bytes flipped at the same size, an array header's shape rewritten) mutated; the card
builder and capsule_array must answer for each: a card `ok` or `damaged` with a reason, arrays answered or refused as
NotFound / BadParameter (the route's 404 / 400) — no other exception (a 500), bounded time and memory."""

from __future__ import annotations

import json
import os
import signal
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorboard_plugin_dbg.analysis import capsule_array, capsule_summary
from tensorboard_plugin_dbg.api.errors import ApiError
from tensorboard_plugin_dbg.capsule import writer
from tensorboard_plugin_dbg.index.protocol import NotFound, RecordGone
from tensorboard_plugin_dbg.reader import capsule_files

CASE_SECONDS = 20  # one case's wall-clock bound (a shared 2-core machine)
PEAK_BYTES = 64 << 20  # what one case may allocate at its peak (the capsule is a few kB)
ARRAYS = {"batch": ("x", "y"), "weights": ("dense/kernel", "file"), "optimizer": ("adam/m",)}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)


def _write(folder: str) -> str:
    x = np.arange(24, dtype=np.float32).reshape(8, 3)
    x[5, 1] = np.nan
    groups = {
        "batch": {"x": x, "y": np.array([0, 1] * 4, np.int64)},
        "weights": {"dense/kernel": np.ones((3, 2), np.float32), "file": np.array([np.inf], np.float32)},
        "optimizer": {"adam/m": np.zeros((3, 2), np.float32)},
        "rng": {},
    }
    manifest = {
        "step": 3,
        "trigger": {"kind": "loss", "name": "loss"},
        "batch_structure": {"kind": "array", "name": "x"},
    }
    return writer.write_capsule(folder, "cap", manifest, groups)


def _mutate_manifest(folder: str, key: str, value: object, mode: str) -> None:
    path = os.path.join(folder, capsule_files.MANIFEST)
    with open(path) as f:
        manifest = json.load(f)
    target = manifest["files"]["batch"] if key == "files.batch" else manifest
    field = "bytes" if key == "files.batch" else key
    if mode == "delete":
        target.pop(field, None)
    elif mode == "deep":
        target[field] = None
        text = json.dumps(manifest).replace("null", "[" * 3000 + "]" * 3000, 1)
        with open(path, "w") as f:
            f.write(text)
        return
    else:
        target[field] = value
    with open(path, "w") as f:
        json.dump(manifest, f)


def _mutate_npz(folder: str, group: str, positions: list[int], shape: str | None) -> None:
    path = os.path.join(folder, f"{group}.npz")
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if shape is not None:  # same length keeps the zip's sizes; the header's claim changes
        old = data.find(b"'shape': (")
        end = data.find(b")", old)
        if old >= 0 and end > old:
            claim = f"'shape': ({shape},)".encode()[: end + 1 - old].ljust(end + 1 - old, b" ")
            data[old : end + 1] = claim[:-1] + b")"
    for p in positions:
        data[p % len(data)] ^= 0xA5
    with open(path, "wb") as f:
        f.write(bytes(data))


class _TooSlow(Exception):
    pass


def _alarm(signum, frame):
    raise _TooSlow


def _check(logdir: str, folder: str) -> None:
    card = capsule_summary.summary(folder, logdir)
    assert card["status"] in ("ok", "damaged") and (card["status"] == "ok" or card["error"]), card
    for group, names in ARRAYS.items():
        for name in names:
            try:
                answer = capsule_array.capsule_array(logdir, "cap", group, name, "...", 8)  # type: ignore[arg-type]
            except (NotFound, RecordGone, ApiError):
                continue
            assert isinstance(answer["shape"], list)


@pytest.fixture(autouse=True)
def _bounded():
    previous = signal.signal(signal.SIGALRM, _alarm)
    yield
    signal.signal(signal.SIGALRM, previous)


def _run_case(tmp_path_factory, mutate) -> None:
    logdir = str(tmp_path_factory.mktemp("fuzzcap"))
    folder = _write(logdir)
    mutate(folder)
    tracemalloc.start()
    signal.alarm(CASE_SECONDS)
    try:
        _check(logdir, folder)
    except _TooSlow:
        pytest.fail(f"a case took more than {CASE_SECONDS} s")
    finally:
        signal.alarm(0)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < PEAK_BYTES, peak


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    key=st.sampled_from(["step", "trigger", "files", "batch_structure", "program", "epoch", "files.batch", "format"]),
    value=json_values,
    mode=st.sampled_from(["replace", "delete", "deep"]),
)
def test_a_mutated_manifest_is_a_card_never_a_500(tmp_path_factory, key, value, mode):
    _run_case(tmp_path_factory, lambda folder: _mutate_manifest(folder, key, value, mode))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    group=st.sampled_from(["batch", "weights", "optimizer"]),
    positions=st.lists(st.integers(0, 10**6), max_size=4),
    shape=st.none() | st.sampled_from([str(10**12), f"{2**62}, 4", "-1", "99999999999", "0"]),
)
def test_a_mutated_npz_is_a_card_never_a_500(tmp_path_factory, group, positions, shape):
    _run_case(tmp_path_factory, lambda folder: _mutate_npz(folder, group, positions, shape))

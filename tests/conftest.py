"""Shared fixtures: real-TensorFlow dumps (made once per session, see tests/dumps.py)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dumps


@pytest.fixture(scope="session")
def demo_dump() -> str:
    """The demo program's FULL_HEALTH dump: a directory holding one file set (-inf from Log, then NaN)."""
    return dumps.make_dump("demo")


@pytest.fixture(scope="session")
def demo_logdir(demo_dump: str) -> str:
    """A logdir whose only run is the demo dump (the dump's parent folder)."""
    return os.path.dirname(demo_dump)

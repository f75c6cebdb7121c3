"""What mypy checks of the unit tests' fakes (tests/test_fakes_typed.py runs it): the fake run and catalog that the
API tests serve through the real routes follow protocol.RunQueries and protocol.Catalog, so a method added to the
protocol (or renamed, or given another parameter) breaks here, named, instead of as a 500 deep in a route test."""

from __future__ import annotations

from api_helpers import FakeCatalog, FakeRun

from tensorboard_plugin_dbg.index.protocol import Catalog, RunQueries

FAKE_RUN: type[RunQueries] = FakeRun
FAKE_CATALOG: type[Catalog] = FakeCatalog

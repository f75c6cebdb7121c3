"""End-to-end (#41): a dump written by the JAX writer (tests/programs/jax_bugs.py, real JAX on CPU) in Chromium
against a real `tensorboard`: the root-cause card names the jitted op and the user's line, one click highlights it."""

from __future__ import annotations

import dumps
import pytest
from e2e_helpers import screenshot, wait_focused_source_line
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytest.importorskip("jax")
pytestmark = pytest.mark.e2e


def test_jax_float16_overflow_card_to_the_line(page):
    program = dumps.program_path("jax_bugs")
    with TensorBoardProcess(dumps.make_dump("jax_bugs", "float16")) as tb:
        frame = open_dashboard(page, tb)
        card = by_testid(frame, "root-cause")
        card.wait_for(timeout=30_000)
        wait_text(card, r"Root cause", timeout_ms=30_000)
        wait_text(card, r"jvp\(\)/mul_\d+")
        wait_text(card, r"jax_bugs\.py:\d+")
        # a JAX run's graph is a jitted function, as `report` says, never a tf.function
        graph = card.locator(".rc-graph")
        assert "(jitted function)" in graph.inner_text() and "tf.function" not in graph.inner_text()
        assert graph.get_attribute("title").endswith(": a function compiled with jax.jit")
        assert "a jitted function call opens it" in by_testid(frame, "tl-boxes").get_attribute("title")
        card.click()
        wait_focused_source_line(frame, program, "# CULPRIT-float16")
        screenshot(page, "jax-1-float16")
        assert_no_console_errors(page)


def test_jax_nan_in_a_loops_untraced_iterations_card_and_graph_execution_say_so(page):
    """A while loop of 150 iterations whose NaN is born at the 121st (tests/programs/jax_loops.py "late"): the card
    says the NaN appeared in the untraced iterations 101–150, and Graph Execution's row for the loop's trace mask says
    which iterations were not traced, rather than nothing."""
    with TensorBoardProcess(dumps.make_dump("jax_loops", "FULL_HEALTH", "late")) as tb:
        frame = open_dashboard(page, tb)
        card = by_testid(frame, "root-cause")
        card.wait_for(timeout=30_000)
        wait_text(card, r"while_1")
        loop = by_testid(card, "rc-untraced-body")
        assert "the NaN appeared in iterations 101–150 of this while loop, which are not traced" in loop.inner_text()
        by_testid(frame, "filter-op-name").fill("iterations")
        by_testid(frame, "filter-op-name").press("Enter")
        cell = by_testid(frame, "ge-loop").first
        cell.wait_for(timeout=30_000)
        assert cell.inner_text() == "ran 150 iterations; iterations 101–150 not traced"
        screenshot(page, "jax-2-loop-untraced")
        assert_no_console_errors(page)


def test_jax_nan_inside_a_shard_map_body_card_to_the_line_and_the_body_graph(page):
    """A NaN born inside a shard_map body (tests/programs/jax_shard_map.py, 2 CPU devices): the card names the log in
    the body's graph, which says its figures cover every device's shard; one click highlights the body's line, and
    Graph Structure shows the op in the body's graph under the jitted step that calls it."""
    program = dumps.program_path("jax_shard_map")
    with TensorBoardProcess(dumps.make_dump("jax_shard_map", "FULL_HEALTH", "auto", "check")) as tb:
        frame = open_dashboard(page, tb)
        card = by_testid(frame, "root-cause")
        card.wait_for(timeout=30_000)
        wait_text(card, r"log_\d+", timeout_ms=30_000)
        graph = card.locator(".rc-graph")
        assert "jit_step.shard_map_1 (jitted function)" in graph.inner_text(), graph.inner_text()
        assert "a shard_map body in a function compiled with jax.jit" in graph.get_attribute("title")
        card.click()
        wait_focused_source_line(frame, program, "# CULPRIT shard_map")
        wait_text(by_testid(frame, "gs-focus-op"), r"^log_\d+")
        meta = by_testid(frame, "gs-focus-op").inner_text()
        assert "in jit_step › jit_step.shard_map_1 (a shard_map body" in meta, meta
        screenshot(page, "jax-3-shard-map-body")
        assert_no_console_errors(page)

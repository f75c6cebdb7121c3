"""End-to-end (#17): Graph Structure's drawn neighbourhood in Chromium on a real dump. From the root cause (Log of
a probability passed in from another tf.function), the upstream chain is drawn through the function boundary back
to the eager call that made the tensor and into that function's graph, each node with its health; clicking nodes
walks the graph (the other panels follow)."""

from __future__ import annotations

import dumps
import pytest
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e


def _node(frame, suffix: str):
    return frame.locator(f"[data-testid=gs-node][data-id$='{suffix}']")


def test_drawn_graph_crosses_the_function_boundary_and_walks(page):
    with TensorBoardProcess(dumps.make_dump("nan_function_input")) as tb:
        frame = open_dashboard(page, tb)
        card = by_testid(frame, "root-cause")
        wait_text(card, r"Root cause:\s+Log", timeout_ms=30_000)
        card.click()
        wait_text(by_testid(frame, "gs-focus-op"), r"^Log")
        by_testid(frame, "gs-mode").click()  # draw the graph
        hops = by_testid(frame, "gs-hops")
        hops.fill("8")
        hops.dispatch_event("change")
        drawn = by_testid(frame, "gs-drawn")
        drawn.wait_for(timeout=20_000)
        _node(frame, ":Softmax").wait_for(timeout=20_000)
        # The chain: Log <- probs (function input) <- the eager call of `model` <- model's Identity <- Softmax.
        caller = frame.locator("[data-testid=gs-node][data-id^='exec:']")
        assert caller.count() == 1 and "__inference_model_" in caller.text_content()
        assert _node(frame, ":Log").get_attribute("data-health") == "nonfinite"
        assert _node(frame, ":Softmax").get_attribute("data-health") == "finite"
        assert _node(frame, ":probs").get_attribute("data-health") == "untraced"
        assert frame.locator(".gs-edge-line.cross").count() == 2  # caller -> probs, Identity -> caller
        assert "no control dependencies" in by_testid(frame, "gs-notes").inner_text()
        screenshot(page, "graph-1-drawn-across-functions")
        # Walk: Softmax, then its input stack, then mul — three hops by clicking; Graph Execution follows.
        for name in ("Softmax", "stack", "mul"):
            # each drawing opens at 1:1 on its focus, and Fit stops at readable labels (8 hops do not fit the pane):
            # the node is reached as a keyboard user reaches it, focused and Enter (a node is a button)
            _node(frame, f":{name}").first.focus()
            page.keyboard.press("Enter")
            wait_text(by_testid(frame, "gs-focus-op"), rf"^{name}\b")
            wait_text(frame.locator("[data-testid=ge-list] .vl-row.focused"), rf"\b{name}\b")
            frame.locator(f"[data-testid=gs-node].focused[data-id$=':{name}']").wait_for(timeout=20_000)
        screenshot(page, "graph-2-walked")
        assert_no_console_errors(page)

"""End-to-end (#17): the drawn neighbourhood's name-scope groups, its layout in a Web Worker, device badges, in
Chromium on real dumps. A Keras model's ops lie in scopes (`gradient_tape/...`, `sequential_1/dense_1/...`): a
scope's box collapses into one node whose op count is the API's count of ops under that prefix, with the edges
into and out of it rerouted to it and counted, and it opens again; the layout ran in the worker, not on the page's
thread. A MirroredStrategy step spans two CPUs: each op says its device."""

from __future__ import annotations

import re
import time
from collections import Counter

import dumps
import pytest
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e

WORST_FIRST = ["nonfinite", "contained", "unknown", "finite", "untraced"]


def _draw(page, frame, hops: str = "8") -> dict:
    """Switches Graph Structure to its drawn mode at `hops` and returns the API's answer the page drew."""
    by_testid(frame, "gs-mode").click()
    field = by_testid(frame, "gs-hops")
    with page.expect_response(lambda r: "graph_neighborhood" in r.url and f"hops={hops}" in r.url) as answer:
        field.fill(hops)
        field.dispatch_event("change")
    # The drawing of this answer: laid out in the worker and its nodes in the page. (Waiting for the layout's mark
    # alone once saw no node under CI's load: a re-render emptied the panel between the mark and the count.)
    drawn = frame.locator("[data-testid=gs-drawn][data-layout=worker]")
    nodes = frame.locator("[data-testid=gs-drawn][data-layout=worker] [data-testid=gs-node]")
    deadline = time.monotonic() + 30
    while not (drawn.count() == 1 and nodes.count() > 0) and time.monotonic() < deadline:
        time.sleep(0.05)
    return answer.value.json()


def _edges(frame) -> Counter:
    lines = frame.locator(".gs-edge-line").evaluate_all(
        "ls => ls.map(l => [l.dataset.source, l.dataset.target, Number(l.dataset.count)])"
    )
    return Counter({(s, t): c for s, t, c in lines})


def _in_scope(node: dict, graph_id: str, path: str) -> bool:
    return node["kind"] == "op" and node["graph_id"] == graph_id and node["op_name"].startswith(path + "/")


def _check_worker_script(tb) -> None:
    """The worker's chunk, which index.js names, is served as JavaScript (a module worker needs a JavaScript MIME
    type) and cached for good (its name holds its content hash)."""
    _, _, index, _ = tb.get("/data/plugin/dbg/index.js")
    [chunk] = set(re.findall(rb"static/(graph-layout\.[0-9a-f]{16}\.js)", index))
    status, headers, body, _ = tb.get("/data/plugin/dbg/static/" + chunk.decode())
    assert status == 200 and b"onmessage" in body
    assert headers["Content-Type"].startswith("text/javascript") and "immutable" in headers["Cache-Control"]


def test_a_scope_collapses_to_one_node_with_its_count_and_rerouted_edges(page):
    with TensorBoardProcess(dumps.make_dump("nan_keras")) as tb:
        _check_worker_script(tb)
        frame = open_dashboard(page, tb)
        card = by_testid(frame, "root-cause")
        wait_text(card, r"Root cause:", timeout_ms=30_000)
        card.click()
        n = _draw(page, frame)
        nodes = frame.locator("[data-testid=gs-node]")
        assert nodes.count() == len(n["nodes"]) <= 60, "a neighbourhood this size opens with every scope open"
        # The layout ran in the worker: the drawing says so, and Chromium lists the worker's script.
        assert frame.locator("[data-testid=gs-drawn]").get_attribute("data-layout") == "worker"
        assert any("graph-layout." in w.url and "graph-layout-main" not in w.url for w in page.workers)
        # The biggest top-level scope of the focused op's graph.
        box = frame.locator("[data-testid=gs-group]")
        scopes = box.evaluate_all("bs => bs.map(b => [b.dataset.id, b.dataset.scope, Number(b.dataset.count)])")
        graph_id = n["graph_id"]
        top = [s for s in scopes if "/" not in s[1] and s[0] == f"scope:{graph_id}:{s[1]}"]
        group_id, path, shown = max(top, key=lambda s: s[2])
        members = {x["id"] for x in n["nodes"] if _in_scope(x, graph_id, path)}
        assert shown == len(members) >= 5, (path, shown, len(members))
        health = dict(nodes.evaluate_all("ns => ns.map(n => [n.dataset.id, n.dataset.health])"))
        worst = next(c for c in WORST_FIRST if any(health[m] == c for m in members))
        screenshot(page, "graph-scopes-1-open")

        # Collapse it from its header: one node with the count and the worst health; edges rerouted, counted.
        # the header may lie outside the pane (Fit stops at readable labels): focused and Enter, as from the keyboard
        frame.locator(f"[data-testid=gs-group][data-id='{group_id}'] [data-testid=gs-group-head]").focus()
        page.keyboard.press("Enter")
        group = frame.locator(f"[data-testid=gs-group-node][data-id='{group_id}']")
        group.wait_for(timeout=30_000)
        assert group.get_attribute("data-count") == str(len(members))
        assert group.get_attribute("data-health") == worst
        assert f"{len(members)} ops" in group.text_content()
        assert nodes.count() == len(n["nodes"]) - len(members)
        expected: Counter = Counter()
        for e in n["edges"]:
            s = group_id if e["source"] in members else e["source"]
            t = group_id if e["target"] in members else e["target"]
            if not (s == t == group_id):
                expected[(s, t)] += 1
        assert _edges(frame) == expected
        assert any(group_id in pair for pair in expected), "edges go into or out of the collapsed scope"
        screenshot(page, "graph-scopes-2-collapsed")

        # Kept across a re-render of the same neighbourhood (list mode and back fetches it again).
        by_testid(frame, "gs-mode").click()
        by_testid(frame, "gs-input").first.wait_for(timeout=20_000)
        by_testid(frame, "gs-mode").click()
        frame.locator("[data-testid=gs-drawn][data-layout=worker]").wait_for(timeout=30_000)
        group.wait_for(timeout=30_000)

        # Enter on the focused group node opens it again: every op back, the edges as the API gave them.
        group.focus()
        page.keyboard.press("Enter")
        frame.locator(f"[data-testid=gs-group][data-id='{group_id}']").wait_for(timeout=30_000)
        assert frame.locator(f"[data-testid=gs-group-node][data-id='{group_id}']").count() == 0
        assert nodes.count() == len(n["nodes"])
        assert sum(_edges(frame).values()) == len(n["edges"])
        # keyboard focus stayed on the scope (now its box's header), so Enter closes it again
        focused = frame.evaluate("document.activeElement.closest('[data-id]')?.dataset.id")
        assert focused == group_id
        assert_no_console_errors(page)


def test_each_op_says_its_device_when_the_graph_spans_two(page):
    with TensorBoardProcess(dumps.make_dump("mirrored")) as tb:
        frame = open_dashboard(page, tb)
        frame.locator("[data-testid=ge-list] .vl-row", has_text="AddN").first.click()
        wait_text(by_testid(frame, "gs-focus-op"), r"^AddN")
        n = _draw(page, frame, "4")
        devices = {x["id"]: x["device"] for x in n["nodes"] if x["device"]}
        assert len(set(devices.values())) == 2
        badges = frame.locator("[data-testid=gs-node] [data-testid=gs-device]").evaluate_all(
            "bs => bs.map(b => [b.closest('[data-testid=gs-node]').dataset.id,"
            " b.querySelector('.gs-device-text').textContent, b.querySelector('title').textContent])"
        )
        shown = {node: short for node, short, _ in badges}
        # every traced op has one: its device's short name, the full name in its title
        assert {node: full for node, _, full in badges} == devices
        assert shown == {k: v.rsplit("device:", 1)[-1] for k, v in devices.items()}
        replica = next(k for k in devices if k.endswith(":replica_1/Sum"))
        assert shown[replica].endswith("CPU:1")
        screenshot(page, "graph-scopes-3-devices")
        assert_no_console_errors(page)


def test_without_a_worker_the_layout_runs_on_the_page(page):
    page.add_init_script("delete self.Worker")  # every frame, the plugin's iframe included
    with TensorBoardProcess(dumps.make_dump("nan_grad_norm")) as tb:
        frame = open_dashboard(page, tb)
        card = by_testid(frame, "root-cause")
        wait_text(card, r"Root cause:", timeout_ms=30_000)
        card.click()
        by_testid(frame, "gs-mode").click()
        drawn = frame.locator("[data-testid=gs-drawn][data-layout=main]")
        drawn.wait_for(timeout=30_000)
        assert frame.locator("[data-testid=gs-node].focused").count() == 1
        assert frame.locator("[data-testid=gs-group]").count() >= 1
        assert not page.workers
        assert_no_console_errors(page)

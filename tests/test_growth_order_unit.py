"""The order in which a growth origin and a dead ReLU name the ops they carry on into (unit; a fake graph). The
rules find those ops in the order of the trace rows, and ops that do not read each other run in the order the
executor's threads happen to pick (it differs per machine and per run): the names shown, and which of them fall in
"and N more", must not follow it. The nearest in the graph come first, ties by name."""

from __future__ import annotations

import itertools
from typing import Any

from tensorboard_plugin_dbg.analysis.rules import config, dead_consequences, growth_origin
from tensorboard_plugin_dbg.index.state import OpEntry

# op -> the ops it reads: `grown` feeds Abs and Square directly (two ops that may run in either order), Max reads
# Abs, Exp reads Max, Log reads Exp
_GRAPH = {"grown": [], "Abs": ["grown"], "Square": ["grown"], "Max": ["Abs"], "Exp": ["Max"], "Log": ["Exp"]}


class _GraphRun:
    def op_entry(self, graph_id: str, op_name: str) -> OpEntry | None:
        reads = _GRAPH.get(op_name)
        if reads is None:
            return None
        return OpEntry(graph_id, op_name, "Op", [(r, 0) for r in reads], 1, [], (), None, None)


def _finding(kind: str, op_name: str, index: int) -> Any:
    return {
        "type": kind,
        "graph_id": "g",
        "op_name": op_name,
        "op_type": "Relu" if kind == config.DEAD_RELU else "Op",
        "step": 3,
        "source_index": index,
        "evidence": "e",
    }


def _carried(kind: str, order: tuple[str, ...]) -> str:
    """The evidence of the one finding kept when the rules found `order`'s ops in that order (their rows too)."""
    found = [_finding(kind, name, i) for i, name in enumerate(order)]
    if kind == config.ALL_ZERO:  # the dead ReLU is `grown`, its consequences all zero
        found = [_finding(config.DEAD_RELU, "grown", 0)] + [f for f in found if f["op_name"] != "grown"]
        kept = dead_consequences.fold(_GraphRun(), found)  # type: ignore[arg-type]
    else:
        kept = growth_origin.collapse(_GraphRun(), found)  # type: ignore[arg-type]
    assert [f["op_name"] for f in kept] == ["grown"], kept
    return str(kept[0]["evidence"])


def test_a_growth_names_the_ops_it_carries_on_into_nearest_first_whatever_order_they_ran_in():
    said = {_carried(config.VALUE_EXPLOSION, order) for order in itertools.permutations(_GRAPH)}
    assert said == {"e; it carries on into Abs, Square, Max, Exp and 1 more (not found again)"}, said


def test_a_dead_relu_names_its_consequences_the_same_whatever_order_they_ran_in():
    said = {_carried(config.ALL_ZERO, order) for order in itertools.permutations(_GRAPH)}
    assert len(said) == 1 and "no earlier than it died: Abs, Square, Max, Exp and 1 more" in said.pop(), said


class _VariableRun:
    """A variable read (`read`, a ReadVariableOp) that two growing ops read, neither from the other."""

    def op_entry(self, graph_id: str, op_name: str) -> OpEntry | None:
        reads = {"read": [], "grown": ["read"], "other": ["read"]}.get(op_name)
        kind = "ReadVariableOp" if op_name == "read" else "Op"
        if reads is None:
            return None
        return OpEntry(graph_id, op_name, kind, [(r, 0) for r in reads], 1, [], (), None, None)


def test_a_variable_read_by_two_growing_ops_is_named_under_the_same_one_whatever_order_they_ran_in():
    said = set()
    for order in itertools.permutations(["read", "grown", "other"]):
        found = [_finding(config.VALUE_EXPLOSION, name, i) for i, name in enumerate(order)]
        found[order.index("read")]["op_type"] = "ReadVariableOp"
        kept = growth_origin.collapse(_VariableRun(), found)  # type: ignore[arg-type]
        said.add(tuple(sorted((str(f["op_name"]), str(f["evidence"])) for f in kept)))
    assert said == {(("grown", "e; it carries on into read (not found again)"), ("other", "e"))}, said

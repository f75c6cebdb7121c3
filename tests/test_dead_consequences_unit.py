"""Which consequences of a dead ReLU its finding names first (unit; a fake graph). The CI run of stop 44 listed the
four it names in the order the rules happened to find them, so on that machine the ReluGrad reading the ReLU came
after four ops further down and was left in "and 2 more"; the nearest in the graph come first, whatever the order."""

from __future__ import annotations

from typing import Any

from tensorboard_plugin_dbg.analysis.rules import config, dead_consequences
from tensorboard_plugin_dbg.index.state import OpEntry

# op -> the ops it reads: relu feeds ReluGrad and Sum directly, the rest lies further down
_GRAPH = {
    "relu": [],
    "ReluGrad": ["relu"],
    "Sum": ["relu"],
    "Reshape": ["Sum"],
    "MatMul": ["Reshape"],
    "mul": ["MatMul"],
    "update": ["mul"],
}


class _GraphRun:
    def op_entry(self, graph_id: str, op_name: str) -> OpEntry | None:
        reads = _GRAPH.get(op_name)
        if reads is None:
            return None
        return OpEntry(
            graph_id, op_name, "Relu" if op_name == "relu" else "Op", [(r, 0) for r in reads], 1, [], (), None, None
        )


def _finding(kind: str, op_name: str, index: int) -> Any:
    return {
        "type": kind,
        "graph_id": "g",
        "op_name": op_name,
        "op_type": "Op",
        "step": 3,
        "source_index": index,
        "evidence": "e",
    }


def test_the_ops_nearest_the_dead_relu_are_named_first_whatever_order_they_were_found_in():
    far_first = ["update", "mul", "MatMul", "Reshape", "Sum", "ReluGrad"]
    found = [_finding(config.DEAD_RELU, "relu", 0)] + [
        _finding(config.ALL_ZERO, name, i + 1) for i, name in enumerate(far_first)
    ]
    kept = dead_consequences.fold(_GraphRun(), found)  # type: ignore[arg-type]
    assert [f["op_name"] for f in kept] == ["relu"], kept
    named = kept[0]["evidence"].split("no earlier than it died: ")[1]
    assert named.startswith("ReluGrad, Sum, Reshape, MatMul and 2 more"), named  # the two that read it: by name

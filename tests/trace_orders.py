"""Copies of a real dump with its trace records in another order TensorFlow could have written them in (records moved
whole, each keeping its own wall time: CRCs stay valid). A real dump is not the same twice: tf.data's parallel map
threads run two calls of one function at once, and their traces interleave in the file in the threads' order."""

from __future__ import annotations

import shutil
from pathlib import Path

import fuzz_records
from run_helpers import only_run


def overlap_first_two_runs(dump: str, dest: Path, graph_name: str) -> str:
    """A copy of DUMP (under DEST) whose first two runs of the function GRAPH_NAME overlap as CI recorded them: every
    op's trace of both runs first (the run whose op made a NaN/inf ahead), then both runs' inputs (Placeholders:
    `GatherV2 GatherV2_1 GatherV2 GatherV2_1 args_2 args_1 args_2 args_1`), in the file positions those runs' records
    held."""
    run = only_run(dump)
    rows = [run.graph_execution(i, max_elements=0) for i in range(run.info()["counts"]["graph_executions"])]
    mine = [r["index"] for r in rows if r["graph_name"] == graph_name]
    per_run = len({(rows[i]["op_name"], rows[i]["output_slot"]) for i in mine})
    block = mine[: 2 * per_run]
    kinds = [(rows[i]["op_name"], rows[i]["output_slot"]) for i in block]
    assert all(kinds.count(k) == 2 for k in kinds), f"a third run of {graph_name} began inside the first two: {kinds}"
    # each op's first trace in the block is run 0's, its second run 1's; the run whose op made the NaN/inf goes first
    # (the order that failed: the reader's trace first of all, no earlier trace of its input anywhere)
    occurrence = [kinds[: j + 1].count(k) - 1 for j, k in enumerate(kinds)]
    ops = [j for j, i in enumerate(block) if rows[i]["op_type"] != "Placeholder"]
    bad = [occurrence[j] for j in ops if _nonfinite(rows[block[j]])]
    first = bad[0] if bad else 0
    reordered = [block[j] for j in ops if occurrence[j] == first] + [block[j] for j in ops if occurrence[j] != first]
    reordered += [i for i in block if rows[i]["op_type"] == "Placeholder"]
    order = list(range(len(rows)))
    for position, row in zip(sorted(block), reordered):
        order[position] = row
    return write_order(dump, dest, order)


def swap_runs(dump: str, dest: Path, graph_id: str, a: int, b: int) -> str:
    """A copy of DUMP (under DEST) where runs A and B (indexes into the runs of the function GRAPH_ID, negative from
    the end) of that function trade places in the file: each op's A-th and B-th traces swap positions (a parallel
    map's threads finishing element B before element A)."""
    run = only_run(dump)
    rows = [run.graph_execution(i, max_elements=0) for i in range(run.info()["counts"]["graph_executions"])]
    positions: dict[tuple[str, int], list[int]] = {}
    for r in rows:
        if r["graph_id"] == graph_id:
            positions.setdefault((r["op_name"], r["output_slot"]), []).append(r["index"])
    order = list(range(len(rows)))
    for p in positions.values():
        order[p[a]], order[p[b]] = order[p[b]], order[p[a]]
    return write_order(dump, dest, order)


def write_order(dump: str, dest: Path, order: list[int]) -> str:
    """A copy of DUMP under DEST whose trace records are the original's in ORDER (record i: the original's order[i])."""
    copy = dest / "dump"
    shutil.copytree(dump, copy)
    (traces,) = copy.glob("*.graph_execution_traces")
    data = traces.read_bytes()
    records = [data[a:b] for a, b in fuzz_records.spans(data)]
    assert len(records) == len(order)
    traces.write_bytes(b"".join(records[i] for i in order))
    return str(copy)


def _nonfinite(row: dict) -> bool:
    health = row["health"]
    return bool(health.get("nan") or health.get("neg_inf") or health.get("pos_inf"))

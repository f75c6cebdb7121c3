"""Figures of a dump that the CPU and TensorFlow's kernels decide, read from the dump by TensorFlow's own reader.

How many softmax outputs of the demo underflow to 0 (and so how many -inf its Log makes, and every count downstream)
depends on the kernels: oneDNN's (on by default on x86-64, AVX-512 or not) round differently from Eigen's. A test
never writes such a count as a literal; it asks this module (tests/oracle.py, run in a subprocess so the test
process never imports TensorFlow).
"""

from __future__ import annotations

import os

import dumps

ORACLE = os.path.join(dumps.ROOT, "tests", "oracle.py")
# A FULL_HEALTH debug vector: [tensor_id, device, dtype, rank, size, -inf, +inf, NaN, negative, zero, positive].
HEALTH_FIELDS = ("size", "neg_inf", "pos_inf", "nan", "neg", "zero", "pos")


def health(vector: list) -> dict[str, int]:
    """A FULL_HEALTH vector's counts by name."""
    return {name: int(v) for name, v in zip(HEALTH_FIELDS, vector[4:11], strict=True)}


def demo_facts(dump_dir: str) -> dict:
    """The demo dump's root cause as TF's reader sees it: `log_index` (the first graph trace of Log with a -inf),
    `log` (its output's counts), `probs_index` and `probs` (its input, the softmax output), and `alerts` (one per
    non-finite traced tensor or eager execution, the plugin's unit)."""
    snap = dumps.run_tf_script(ORACLE, dump_dir)
    traces = snap["traces"]
    log_index = next(
        i for i, t in enumerate(traces) if t["op_type"] == "Log" and t["value"] and health(t["value"])["neg_inf"]
    )
    log = traces[log_index]
    input_op = snap["ops"][f"{log['graph_id']}/{log['op_name']}"]["input_names"][0].split(":")[0]
    probs_index = max(
        i for i in range(log_index) if traces[i]["op_name"] == input_op and traces[i]["graph_id"] == log["graph_id"]
    )
    alerted = {(a[7], a[8]) for a in snap["alerts"]}  # (execution index, graph trace index): one of the two is set
    return {
        "log_index": log_index,
        "log": health(log["value"]),
        "probs_index": probs_index,
        "probs": health(traces[probs_index]["value"]),
        "alerts": len(alerted),
    }

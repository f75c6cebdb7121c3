"""Helpers the compare tests share: a program's twin dumps (a, b), the line its bug was injected at, and the CLI's
`compare` run in-process. They lived in test_compare.py, which still re-exports them."""

from __future__ import annotations

import io
import json
import sys

import dumps
import numpy as np

from tensorboard_plugin_dbg.__main__ import main


def pair(name: str, mode: str) -> tuple[str, str]:
    return dumps.make_dump(name, "a", mode), dumps.make_dump(name, "b", mode)


def injected_line(name: str) -> int:
    with open(dumps.program_path(name)) as f:
        return next(i for i, line in enumerate(f, 1) if "# INJECTED" in line)


def compare_json(*args: str) -> tuple[int, dict]:
    out = io.StringIO()
    code = _main(out, ["compare", *args, "--json"])
    return code, json.loads(out.getvalue())


def _main(out: io.StringIO, argv: list[str]) -> int:
    old = sys.stdout
    sys.stdout = out
    try:
        return main(argv)
    finally:
        sys.stdout = old


class ShuffledTraces:
    """A run whose traces at `rows` were written in another order, as a parallel tf.data map's threads may write
    them: trace row i holds what the real run holds at row order[i]; wall times stay where they were (the k-th
    write happened when it did, only another thread's trace landed there). Everything else is the real run's."""

    def __init__(self, run, rows: np.ndarray, seed: int):
        self._run = run
        self.order = np.arange(len(run.trace_arrays()["kind"]))
        self.order[rows] = rows[np.random.RandomState(seed).permutation(len(rows))]
        self._inverse = np.argsort(self.order)

    def __getattr__(self, name: str):
        return getattr(self._run, name)

    def trace_arrays(self) -> dict:
        arrays = dict(self._run.trace_arrays())
        for name in ("kind", "loc"):
            arrays[name] = np.asarray(arrays[name])[self.order]
        arrays["nonfinite_rows"] = np.sort(self._inverse[np.asarray(arrays["nonfinite_rows"], np.int64)])
        return arrays

    def trace_vectors(self, rows, summary: bool = False):
        return self._run.trace_vectors(self.order[np.asarray(rows, np.int64)], summary)

    def tensor_record(self, source, index, output=None):
        return self._run.tensor_record(source, int(self.order[index]) if source == "graph" else index, output)

    def graph_execution(self, index, begin=0, max_elements=1000):
        return self._run.graph_execution(int(self.order[index]), begin, max_elements)

    def op_trace_rows(self, graph_id, op_name, output_slot=None):
        return np.sort(self._inverse[self._run.op_trace_rows(graph_id, op_name, output_slot)])

"""The two systems under test, each spoken to only through its own routes.

`Ours` uses `/data/plugin/dbg/...` (frontend/src/api/wire.ts); `Reference` uses TensorBoard's built-in Debugger V2,
`/data/plugin/debugger-v2/...` (parameter names from tensorboard/plugins/debugger_v2/debugger_v2_plugin.py). Both
expose the same questions to the runner: is everything read, how many alerts, and the paths of the pages timed.
"""

from __future__ import annotations

import urllib.parse

import dump_model as dm

OP_NAME = "dense_142/MatMul"  # an op in the middle of the graph
SOURCE_INDEX = 3  # tensorflow/python/ops/math_ops.py, ~6,000 lines: a big file


def _timed_json(tb, path: str) -> tuple:
    """(parsed body, seconds taken); HTTPStatusError (a RuntimeError, harness/tensorboard_process.py) unless 200."""
    answer = tb.get(path)
    return answer.json(), answer.seconds


class NotAvailable(RuntimeError):
    """The system cannot answer (e.g. our backend is not built yet); the table says so instead of crashing."""


class Ours:
    label = "dbg (ours)"
    plugin = "dbg"
    dashboard = "dbg"

    def __init__(self, tb, traces: int):
        self.tb, self.traces = tb, traces
        self.run = None

    def _q(self, route: str, **params) -> str:
        params = {"run": self.run, **params} if self.run is not None else params
        return f"/data/plugin/dbg/{route}?" + urllib.parse.urlencode(params)

    def kick(self) -> None:
        """First request: starts our catalog (TensorBoard does the same via is_active on the first page load)."""
        status, _, body, _ = self.tb.get("/data/plugin/dbg/runs")
        if status != 200:
            raise NotAvailable(f"/data/plugin/dbg/runs answered HTTP {status}: {body[:200]!r}")

    def poll(self) -> dict:
        """{'read': traces read, 'alerts': alerts total, 'done': everything read, 'latencies': [s, ...]}."""
        runs, secs = _timed_json(self.tb, "/data/plugin/dbg/runs")
        latencies = [secs]
        if not runs.get("runs"):
            return {"read": 0, "alerts": 0, "done": False, "latencies": latencies}
        info = runs["runs"][0]
        self.run = info["name"]
        alerts, secs = _timed_json(self.tb, self._q("alerts", begin=0, end=0))
        latencies.append(secs)
        return {
            "read": info["counts"]["graph_executions"],
            "alerts": alerts["total"],
            "done": bool(info["status"]["done"]),
            "latencies": latencies,
        }

    def page_path(self, begin: int) -> str:
        return self._q("graph_executions", begin=begin, end=begin + 100)

    def health_page_paths(self, begin: int) -> list[str]:
        """What the list needs to show 100 rows with their health: our page carries it."""
        return [self.page_path(begin)]

    def alerts_path(self) -> str:
        return self._q("alerts", begin=0, end=100)

    def op_path(self) -> str:
        return self._q("op", graph_id=dm.INNER_GRAPH_ID, op_name=OP_NAME)

    def source_path(self) -> str:
        return self._q("source_file", index=SOURCE_INDEX)

    def check_page(self, body: dict, begin: int) -> bool:
        return len(body.get("rows", [])) == min(100, self.traces - begin)


class Reference:
    label = "Debugger V2 (reference)"
    plugin = "debugger-v2"
    dashboard = "debugger-v2"
    RUN = "__default_debugger_run__"

    def __init__(self, tb, traces: int):
        self.tb, self.traces = tb, traces

    def _q(self, route: str, **params) -> str:
        return f"/data/plugin/debugger-v2/{route}?" + urllib.parse.urlencode({"run": self.RUN, **params})

    def kick(self) -> None:
        """Its first route call creates the reader and starts its update thread (as the page's first poll does)."""
        status, _, body, _ = self.tb.get("/data/plugin/debugger-v2/runs")
        if status != 200:
            raise NotAvailable(f"/data/plugin/debugger-v2/runs answered HTTP {status}: {body[:200]!r}")

    def poll(self) -> dict:
        runs, secs = _timed_json(self.tb, "/data/plugin/debugger-v2/runs")
        latencies = [secs]
        if self.RUN not in runs:
            return {"read": 0, "alerts": 0, "done": False, "latencies": latencies}
        # begin=0&end=0: an empty page whose `num_digests` says how many traces it has read so far.
        digests, secs = _timed_json(self.tb, self._q("graph_execution/digests", begin=0, end=0))
        latencies.append(secs)
        alerts, secs = _timed_json(self.tb, self._q("alerts", begin=0, end=0))
        latencies.append(secs)
        read = digests["num_digests"]
        # It has no "done" signal; it is done when every trace has been read (its monitor runs per trace read).
        return {"read": read, "alerts": alerts["num_alerts"], "done": read >= self.traces, "latencies": latencies}

    def page_path(self, begin: int) -> str:
        return self._q("graph_execution/digests", begin=begin, end=begin + 100)

    def health_page_paths(self, begin: int) -> list[str]:
        """Its digests carry no health: its list asks `graph_execution/data` for the same rows as well."""
        return [self.page_path(begin), self._q("graph_execution/data", begin=begin, end=begin + 100)]

    def alerts_path(self) -> str:
        return self._q("alerts", begin=0, end=100)

    def op_path(self) -> str:
        return self._q("graphs/op_info", graph_id=dm.INNER_GRAPH_ID, op_name=OP_NAME)

    def source_path(self) -> str:
        return self._q("source_files/file", index=SOURCE_INDEX)

    def check_page(self, body: dict, begin: int) -> bool:
        return len(body.get("graph_execution_digests", [])) == min(100, self.traces - begin)

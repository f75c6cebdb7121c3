"""Helpers for the API tests: TensorBoard's real WSGI app around our plugin, a JSON getter, a FAKE catalog (unit
tests only) and JSON Schema validation against the schema generated from wire.ts."""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import math
import os
import time
from collections.abc import Callable
from typing import Any, ClassVar
from urllib.parse import urlencode

import jsonschema
import numpy as np
from fake_columnar import ColumnarFromPages
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug.test import Client

from tensorboard_plugin_dbg.analysis import report_text, rules_report
from tensorboard_plugin_dbg.index.derived import DerivedCache
from tensorboard_plugin_dbg.index.protocol import FileLineOps, NotFound, TensorRecord
from tensorboard_plugin_dbg.index.trace_filter import NO_FILTER
from tensorboard_plugin_dbg.plugin import DbgPlugin
from tensorboard_plugin_dbg.reader import tensor_content

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA_PATH = os.path.join(ROOT, "tensorboard_plugin_dbg", "api", "wire_schema.json")
PREFIX = "/data/plugin/dbg/"


class _Loader(base_plugin.TBLoader):
    """Loads DbgPlugin with a chosen catalog factory (None: the real index)."""

    def __init__(self, factory: Callable[[str], Any] | None):
        self._factory = factory
        self.plugin: DbgPlugin | None = None

    def load(self, context):
        self.plugin = DbgPlugin(context, catalog_factory=self._factory)
        return self.plugin


def make_app(logdir: str, catalog_factory: Callable[[str], Any] | None = None):
    """(TensorBoard WSGI app, our plugin instance), built the way `tensorboard` builds it (TensorBoardWSGIApp)."""
    flags = argparse.Namespace(
        logdir=logdir, path_prefix="", samples_per_plugin={}, window_title="", generic_data="false"
    )
    loader = _Loader(catalog_factory)
    app = application.TensorBoardWSGIApp(flags, [loader], data_provider=None)
    assert loader.plugin is not None, "TensorBoard failed to load the plugin (see log)"
    return app, loader.plugin


def url(route: str, **params: Any) -> str:
    query = urlencode({k: v for k, v in params.items() if v is not None})
    return PREFIX + route + ("?" + query if query else "")


def get(client: Client, path: str, **kwargs) -> tuple[int, Any, Any]:
    """(status, headers, decoded JSON) — fails the test if the body is not JSON."""
    resp = client.get(path, **kwargs)
    data = resp.get_data()
    if resp.headers.get("Content-Encoding") == "gzip":
        data = gzip.decompress(data)
    assert resp.headers.get("Content-Type", "").startswith("application/json"), (path, resp.status, data[:200])
    return resp.status_code, resp.headers, json.loads(data)


def ok(client: Client, route: str, **params) -> Any:
    status, _, body = get(client, url(route, **params))
    assert status == 200, (route, params, body)
    return body


def wait_indexed(client: Client, timeout: float = 60) -> dict:
    """The `runs` answer once every run reports done (the refresher reads in the background)."""
    deadline = time.monotonic() + timeout
    while True:
        body = ok(client, "runs")
        if body["runs"] and all(r["status"]["done"] for r in body["runs"]):
            return body
        assert time.monotonic() < deadline, f"index not done after {timeout}s: {body}"
        time.sleep(0.2)


# ------------------------------------------------------------------------------------------------ JSON Schema


def load_schema(path: str = SCHEMA_PATH) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def validator(schema: dict, type_name: str) -> jsonschema.Draft7Validator:
    assert type_name in schema["definitions"], type_name
    return jsonschema.Draft7Validator({"$ref": f"#/definitions/{type_name}", "definitions": schema["definitions"]})


def schema_errors(schema: dict, type_name: str, value: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(schema, type_name).iter_errors(value)
    ][:5]


# ------------------------------------------------------------------------------------------------ FAKE catalog


def _health(i: int) -> dict:
    bad = i % 7 == 3
    return {
        "mode": "FULL_HEALTH",
        "tensor_id": np.int64(i),
        "device_id": -1,
        "dtype": "float32",
        "rank": 2,
        "size": 12,
        "neg_inf": 1 if bad else 0,
        "pos_inf": 0,
        "nan": 0,
        "neg": 3,
        "zero": 2,
        "pos": 6,
    }


class FakeRun(ColumnarFromPages):
    """A small in-memory run following protocol.RunQueries, with numpy scalars and non-finite values in it (its
    columnar side, which the analysis reads, is derived from its pages: fake_columnar.py)."""

    def __init__(self, name: str, n_graph_executions: int = 1500):
        self.name = name
        self.derived = DerivedCache()
        self.calls: list[tuple] = []
        self.rows = [
            {
                "index": i,
                "wall_time": 1000.0 + i,
                "op_name": f"model/dense_{i % 5}/MatMul",
                "op_type": "MatMul" if i % 2 else "Log",
                "output_slot": 0,
                "graph_id": "g1" if i % 3 else "g2",
                "device_name": None,
                "host": "h",
                "health": _health(i),
            }
            for i in range(n_graph_executions)
        ]
        self.execs = [
            {
                "index": i,
                "wall_time": np.float64(900.0 + i),
                "op_type": "__inference_f_1",
                "is_function": True,
                "num_outputs": 1,
                "host": "h",
                "device": "/job:localhost/replica:0/task:0/device:CPU:0" if i % 2 else None,
                "tensor_debug_mode": "FULL_HEALTH",
                "neg_inf": 0,
                "pos_inf": 0,
                "nan": 1 if i == 2 else 0,
                "alert": i == 2,
                "graph_id": "g1",
            }
            for i in range(4)
        ]
        self.frames = {
            f"f{i}": {
                "id": f"f{i}",
                "host": "h",
                "path": "/u/train.py",
                "line": 10 + i,
                "function": "<module>",
                "source_index": 0,
                "is_user": True,
            }
            for i in range(3)
        }

    def info(self):
        return {
            "name": self.name,
            "start_time": 1000.0,
            "tf_version": "2.21.0",
            "framework": "tensorflow",
            "tfdbg_run_id": "abc",
            "hosts": ["h"],
            "debug_modes": ["FULL_HEALTH"],
            "counts": {
                "executions": len(self.execs),
                "graph_executions": len(self.rows),
                "graphs": 2,
                "ops": 5,
                "source_files": 1,
                "stack_frames": 3,
                "alerts": len(self.alert_table()),
                "alerts_by_type": {"InfNanAlert": len(self.alert_table())},
            },
            "status": {"bytes_read": 10, "bytes_total": 10, "done": True, "last_refresh": None, "notices": []},
        }

    def alerts(self, begin, end, alert_type=None):
        self.calls.append(("alerts", begin, end, alert_type))
        return super().alerts(begin, end, alert_type)

    def executions(self, begin, end):
        return {"begin": begin, "end": end, "total": len(self.execs), "executions": self.execs[begin:end]}

    def execution(self, index, max_elements=1000):
        self.calls.append(("execution", index, max_elements))
        if index >= len(self.execs):
            raise NotFound(f"no execution {index}")
        values = np.array([1.0, math.nan, math.inf, -math.inf], dtype=np.float32)[:max_elements]
        return {
            **self.execs[index],
            "input_tensor_ids": [1],
            "output_tensor_ids": [2],
            "output_tensor_device_ids": [1],
            "output_devices": [None],
            "outputs": [{"mode": "EMPTY"}],
            "values": [
                {
                    "dtype": "float32",
                    "shape": [4],
                    "size": 4,
                    "begin": 0,
                    "end": len(values),
                    "truncated": len(values) < 4,
                    "values": values,
                }
            ],
            "stack_frame_ids": ["f0"],
            "graph_name": None,
        }

    def graph_executions(self, begin, end, filters=NO_FILTER, call=None, within=None):
        f = filters
        self.calls.append(("graph_executions", begin, end, *dataclasses.astuple(f)))
        rows = [
            r
            for r in self.rows
            if (within is None or r["index"] in set(within.tolist()))
            and (f.op_type is None or r["op_type"] == f.op_type)
            and (f.op_name is None or f.op_name.lower() in r["op_name"].lower())
            and (f.graph_id is None or r["graph_id"] == f.graph_id)
            and (not f.only_nonfinite or r["health"]["neg_inf"])
            and (f.device is None or r["device_name"] == f.device)
            and (f.host is None or r["host"] == f.host)
        ]
        return {
            "begin": begin,
            "end": end,
            "total": len(rows),
            "unfiltered_total": len(self.rows),
            "rows": rows[begin:end],
            "call": None,
        }

    def device_counts(self):
        return {
            "devices": [{"device_name": None, "host": "h", "graph_executions": len(self.rows), "executions": 4}],
            "hosts": ["h"],
        }

    def graph_execution(self, index, begin=0, max_elements=1000):
        self.calls.append(("graph_execution", index, begin, max_elements))
        if index >= len(self.rows):
            raise NotFound(f"no graph execution {index}")
        return {
            **self.rows[index],
            "tensor_debug_mode": "FULL_HEALTH",
            "value": None,
            "graph_name": "f",
            "graph_chain": ["g2", self.rows[index]["graph_id"]],
            "call_index": None,
        }

    def tensor_record(self, source, index, output=None):
        """Traces 0, 4, 8 ... hold a FULL_TENSOR value (a 3 x 4 float32 with a NaN at [1, 2]); the rest FULL_HEALTH."""
        self.calls.append(("tensor_record", source, index, output))
        count = len(self.rows) if source == "graph" else len(self.execs)
        if not 0 <= index < count:
            raise NotFound(f"no {source} {index}")
        if output not in (None, 0):
            raise NotFound(f"{source} {index} has no output {output}")
        base = dict(source=source, index=index, output=0, op_name="Log", op_type="Log", graph_id="g1")
        base.update(wall_time=1000.0 + index, num_outputs=1, key=(source, index))
        if source == "graph" and index % 4 == 0:
            values = np.arange(12, dtype="<f4")
            values[6] = np.nan
            loc = tensor_content.TensorLocation("", 1, "float32", (3, 4), "<f4", small=values)
            return TensorRecord(mode="FULL_TENSOR", location=loc, **base)
        health = self.rows[index]["health"] if source == "graph" else None
        return TensorRecord(mode="FULL_HEALTH", health=health, **base)

    def graph(self, graph_id):
        if graph_id not in ("g1", "g2"):
            raise NotFound(f"no graph {graph_id!r}")
        return {
            "graph_id": graph_id,
            "name": "f",
            "outer_graph_id": None,
            "chain": [{"graph_id": graph_id, "name": "f"}],
            "inner_graphs": [],
            "op_count": 5,
        }

    def graph_op_names(self, graph_id):
        return ["Log"] if graph_id == "g1" else []

    def op(self, graph_id, op_name, near=None):
        self.calls.append(("op", graph_id, op_name, near))
        if (graph_id, op_name) != ("g1", "Log"):
            raise NotFound(f"no op {op_name!r} in graph {graph_id!r}")
        return {
            "graph_id": "g1",
            "graph_chain": [{"graph_id": "g1", "name": "f"}],
            "op_name": "Log",
            "op_type": "Log",
            "device_name": None,
            "num_outputs": 1,
            "output_tensor_ids": [7],
            "stack_frame_ids": ["f0"],
            "host": "h",
            "traces": {"count": 0, "indices": []},
            "inputs": [],
            "consumers": [],
        }

    def source_files(self):
        return {"files": [{"index": 0, "host": "h", "path": "/u/train.py", "line_count": 3, "is_user": True}]}

    def source_file(self, index, begin_line=None, end_line=None):
        self.calls.append(("source_file", index, begin_line, end_line))
        if index != 0:
            raise NotFound(f"no source file {index}")
        return {
            "index": 0,
            "host": "h",
            "path": "/u/train.py",
            "line_count": 3,
            "begin_line": 1,
            "end_line": 3,
            "lines": ["a", "b", "c"],
            "op_lines": [2],
        }

    def source_line_ops(self, index):
        # the one op Log, created at line 2 of the one file (its innermost user frame: direct)
        if index != 0:
            raise NotFound(f"no source file {index}")
        return FileLineOps(np.array([2], np.int32), np.array([0], np.int32), np.array([True]), [("g1", "Log")])

    def stack_frames(self, ids):
        for i in ids:
            if i not in self.frames:
                raise NotFound(f"no stack frame {i!r}")
        return {"frames": [self.frames[i] for i in ids]}


class FakeCatalog:
    """protocol.Catalog over FakeRuns; records start() calls."""

    instances: ClassVar[list[FakeCatalog]] = []

    def __init__(self, logdir: str, runs: tuple[str, ...] = ("run_a", "sub/run_b")):
        self.logdir = logdir
        self._runs = {n: FakeRun(n) for n in runs}
        self.started = 0
        FakeCatalog.instances.append(self)

    def start(self):
        self.started += 1

    def runs(self):
        return [self._runs[n] for n in sorted(self._runs)]

    def run(self, name):
        if name not in self._runs:
            raise NotFound(f"no run named {name!r}")
        return self._runs[name]

    def notices(self):
        return []

    def has_runs(self):
        return bool(self._runs)

    def has_capsules(self):
        return False


def root_cause_answer(run, mutes: tuple = ()) -> dict:
    """What the root_cause route answers for `run`, built from the report's record of it (the verdict after the
    mutes) and the report's text: the record's own fields (`run`, `notices`, `framework`) left out."""
    result = report_text.run_result(run, mutes)
    answer = {k: v for k, v in result.items() if k not in ("run", "notices", "framework")}
    text = rules_report.section_with_rules(run, result, mutes)
    return {**answer, "report_text": text}

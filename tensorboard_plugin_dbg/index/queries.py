"""The query side of a run's index (protocol.RunQueries), mixed into RunIndex.

Every query costs what its answer costs: pages slice the columns, full records are read back by offset, filters
work on trace kinds (a few thousand) and on a per-kind row permutation built once per index version. Derived
tables are cached under a key of the column lengths they were built from, so concurrent appends only make a
cache stale, never wrong.
"""

from __future__ import annotations

import importlib
import os
import re
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..reader import debug_values
from ..reader.schema import MODE_NAMES
from . import frames as frame_rules
from . import record_reads
from .protocol import NotFound
from .run_status import status_notices

_FUNCTION_PREFIXES = ("__inference_", "__forward_", "__backward_")


def _graphs_by_name(graphs) -> dict:
    out: dict = {}
    for g in list(graphs.values()):
        if g.name:
            out.setdefault(g.name, []).append(g.graph_id)
    return out


class QueriesMixin:
    # ------------------------------------------------------------------------------------ cache helper
    def _derive(self, name: str, key, build, stale_ok: bool = False):
        cached = self._derived.get(name)
        if cached is not None and cached[0] == key:
            return cached[1]
        # One builder at a time: without it, 50 concurrent requests after a refresh pass each rebuilt the same
        # table (a sort over every row) at once and held the GIL for seconds (bench/load.py). Reentrant: a
        # build may derive another table. dict.setdefault is atomic, so the lock itself is made once.
        lock = self.__dict__.setdefault("_derive_lock", threading.RLock())
        if stale_ok and cached is not None:
            # While the dump is read, every batch makes the table stale: the requests that arrive while another
            # one rebuilds it get the previous version (as if they had come a moment earlier) instead of queueing
            # behind the rebuild one after another (alert pages waited seconds in bench/load.py).
            if not lock.acquire(blocking=False):
                return cached[1]
        else:
            lock.acquire()
        try:
            cached = self._derived.get(name)
            if cached is not None and cached[0] == key:
                return cached[1]
            value = build()
            self._derived[name] = (key, value)
            return value
        finally:
            lock.release()

    # ------------------------------------------------------------------------------------ run info
    def hosts(self) -> list[str]:
        return sorted({fs.host for fs in self.file_sets})

    def debug_modes(self) -> list[int]:
        # Every `runs` answer asks twice (info and its notices) and every open dashboard polls `runs`: a walk over
        # every trace kind (thousands) was half of that route's cost. Both sets only grow, so their sizes are the key.
        # Not _derive: its lock is held by whole-run builds, which a `runs` poll must never wait for; two threads
        # that miss together just compute the same short list twice.
        key = (len(self.kinds), len(self.exec_modes))
        cached = self._derived.get("debug_modes")
        if cached is None or cached[0] != key:
            cached = self._derived["debug_modes"] = (
                key,
                sorted(self.exec_modes | {k[3] for k in list(self.kinds.kinds)}),
            )
        return cached[1]

    def info(self) -> dict[str, Any]:
        # Counts from one published set of lengths: O(1), whatever the dump's size (the alert count is the two
        # side tables' lengths; sorting them is only needed for a page of alerts).
        lengths = self.lengths()
        n_alerts = lengths.exec_nf + lengths.trace_nf
        by_type = {"InfNanAlert": n_alerts} if n_alerts else {}
        bytes_read = sum(min(s.offset, s.size) for s in self.files if not s.missing)
        bytes_total = sum(s.size for s in self.files if not s.missing)
        return {
            "name": self.name,
            "start_time": self.start_time,
            "tf_version": self.tf_version,
            "tfdbg_run_id": self.run_id,
            "hosts": self.hosts(),
            "debug_modes": [MODE_NAMES.get(m, "UNSPECIFIED") for m in self.debug_modes()],
            "counts": {
                "executions": lengths.execs,
                "graph_executions": lengths.traces,
                "graphs": len(self.graphs),
                "ops": len(self.ops),
                "source_files": len(self.sources),
                "stack_frames": len(self.frames),
                "alerts": n_alerts,
                "alerts_by_type": by_type,
            },
            "status": {
                "bytes_read": int(bytes_read),
                "bytes_total": int(bytes_total),
                "done": bool(self.done),
                "last_refresh": self.last_refresh,
                "notices": status_notices(self),
            },
        }

    # ------------------------------------------------------------------------------------ analysis access
    def kind_info(self, kind: int) -> tuple:
        """(graph_id, op_name, output_slot, mode, device_name) of a trace kind."""
        return self.kinds.kinds[kind]

    def trace_arrays(self) -> dict[str, np.ndarray]:
        """Read-only views of the trace columns: `kind` (int32 code, see kind_info), `wall_time` (float64),
        `loc` (file code << 48 | offset), and `nonfinite_rows` (sorted uint32 rows whose value is non-finite;
        decode one with trace_health)."""
        lengths = self.lengths()
        out = {name: self.traces.view(name, lengths.traces) for name in ("kind", "wall_time", "loc")}
        out["nonfinite_rows"] = self.trace_nf.view("row", lengths.trace_nf)
        for arr in out.values():
            arr.flags.writeable = False
        return out

    def execution_arrays(self) -> dict[str, np.ndarray]:
        """Read-only views of the execution columns (wall_time, op_type code, num_outputs, graph code, file,
        offset, mode, nonfinite flag); decode codes with exec_op_types / exec_graph_ids."""
        n, arrays = self.execs.snapshot()
        n = min(n, self.lengths().execs)
        out = {name: arr[:n] for name, arr in arrays.items()}
        for arr in out.values():
            arr.flags.writeable = False
        return out

    def trace_event(self, index: int):
        n = self.lengths().traces
        if not 0 <= index < n:
            raise NotFound(f"graph execution {index} not found (run has {n})")
        return self.read_trace_event(index).graph_execution_trace

    def trace_health(self, index: int) -> dict[str, Any]:
        t = self.trace_event(index)
        return debug_values.decode_debug_value(int(t.tensor_debug_mode), t.tensor_proto or None)

    def execution_event(self, index: int):
        n, arrays = self.execs.snapshot()
        if not 0 <= index < n:
            raise NotFound(f"execution {index} not found (run has {n})")
        return self.read_event(int(arrays["file"][index]), int(arrays["offset"][index]))

    def op_entry(self, graph_id: str, op_name: str):
        return self.ops.get((graph_id, op_name))

    def graph_chain_ids(self, graph_id: str) -> list[str]:
        chain, seen = [], set()
        g = graph_id
        while g and g not in seen:
            seen.add(g)
            chain.append(g)
            entry = self.graphs.get(g)
            g = entry.outer_id if entry else None
        return chain[::-1]

    # ------------------------------------------------------------------------------------ alerts
    from .alert_queries import (
        _alert_page,
        _alert_role_codes,
        _alert_table,
        _exec_alerts,
        _producer_positions,
        alerts,
        warm,
    )

    # ------------------------------------------------------------------------------------ executions
    def _exec_graph_id(self, index: int, arrays) -> str | None:
        code = int(arrays["graph"][index])
        if code >= 0:
            return self.exec_graph_ids[code]
        op_type = self.exec_op_types[int(arrays["op_type"][index])]
        if not op_type.startswith(_FUNCTION_PREFIXES):
            return None
        # TF leaves graph_id empty for GradientTape functions: their traces were written right before this record.
        wall = arrays["wall_time"][index]
        prev = arrays["wall_time"][index - 1] if index > 0 else -np.inf
        t_wall = self.traces.view("wall_time")
        hi = int(np.searchsorted(t_wall, wall, side="right"))
        if hi > 0 and t_wall[hi - 1] > prev:
            graph_id = self.kinds.kinds[int(self.traces.view("kind")[hi - 1])][0]
            chain = self.graph_chain_ids(graph_id)
            named = [g for g in chain if self.graphs.get(g) and self.graphs[g].name]
            return named[0] if named else graph_id
        # no traces (TF does not trace backward functions): the function name carries the graph's name
        name = re.sub(r"_\d+$", "", op_type.removeprefix("__inference_"))
        ids = self._derive("graphs_by_name", len(self.graphs), lambda: _graphs_by_name(self.graphs))
        matches = ids.get(name, [])
        return matches[0] if len(matches) == 1 else None

    def _exec_digest(self, index: int) -> dict[str, Any]:
        return self._exec_digests(np.array([index], np.int64))[0]

    def _exec_nf_counts(self, rows: np.ndarray, columns: tuple[str, ...]) -> np.ndarray:
        """(len(rows), len(columns)) of the exec_nf columns at execution rows `rows`: their values for the rows
        that have a non-finite entry, those of a neighbouring entry (or 0) for the others, which callers skip."""
        nf_rows = self.exec_nf.view("row")
        if not len(nf_rows):
            return np.zeros((len(rows), len(columns)))
        at = np.minimum(np.searchsorted(nf_rows, rows), len(nf_rows) - 1)
        return np.stack([self.exec_nf.view(c)[at] for c in columns], axis=1)

    def _exec_digests(self, rows: np.ndarray) -> list[dict[str, Any]]:
        """wire.ts ExecutionDigest of each execution row (below the published length). The columns are read once
        per page, not once per row and field; marked finite for the JSON encoder when the wall times are."""
        _n, a = self.execs.snapshot()
        # a row's non-finite counts, where it has some (a count < 0 is unknown: null)
        counts = self._exec_nf_counts(rows, ("neg_inf", "pos_inf", "nan"))
        walls = a["wall_time"][rows]
        op_types, files, graphs = self.exec_op_types, self.files, a["graph"][rows].tolist()
        out = []
        for k, (i, mode, op_code, nonfinite, wall, num_outputs, file_code, row_counts) in enumerate(
            zip(
                rows.tolist(),
                a["mode"][rows].tolist(),
                a["op_type"][rows].tolist(),
                a["nonfinite"][rows].tolist(),
                walls.tolist(),
                a["num_outputs"][rows].tolist(),
                a["file"][rows].tolist(),
                counts.tolist(),
            )
        ):
            op_type = op_types[op_code]
            if nonfinite:
                c = [None if x < 0 else int(x) for x in row_counts]
            else:
                c = [0, 0, 0] if mode in (3, 4, 7) else [None, None, None]
            out.append(
                {
                    "index": i,
                    "wall_time": wall,
                    "op_type": op_type,
                    "is_function": graphs[k] >= 0 or op_type.startswith(_FUNCTION_PREFIXES),
                    "num_outputs": num_outputs,
                    "host": files[file_code].host,
                    "tensor_debug_mode": MODE_NAMES.get(mode, "UNSPECIFIED"),
                    "neg_inf": c[0],
                    "pos_inf": c[1],
                    "nan": c[2],
                    "alert": bool(nonfinite),
                    "graph_id": self._exec_graph_id(i, a),
                }
            )
        return record_reads.FiniteList(out) if bool(np.isfinite(walls).all()) else out

    def executions(self, begin: int, end: int) -> dict[str, Any]:
        n = self.lengths().execs
        end = min(end, n)
        begin = min(begin, end)
        return {
            "begin": begin,
            "end": end,
            "total": n,
            "executions": self._exec_digests(np.arange(begin, end, dtype=np.int64)),
        }

    def execution(self, index: int, max_elements: int = 1000) -> dict[str, Any]:
        event = self.execution_event(index)
        ex = event.execution
        out = self._exec_digest(index)
        mode = int(ex.tensor_debug_mode)
        protos = list(ex.tensor_protos)
        outputs, values = [], []
        for slot in range(max(int(ex.num_outputs), len(protos))):
            proto = protos[slot] if slot < len(protos) else None
            outputs.append(debug_values.decode_debug_value(mode, proto, eager=True))
            values.append(debug_values.tensor_value(proto, 0, max_elements) if mode == 7 else None)
        device_ids = [int(d) for d in ex.output_tensor_device_ids]
        graph = self.graphs.get(out["graph_id"]) if out["graph_id"] else None
        out.update(
            {
                "input_tensor_ids": [int(t) for t in ex.input_tensor_ids],
                "output_tensor_ids": [int(t) for t in ex.output_tensor_ids],
                "output_tensor_device_ids": device_ids,
                "output_devices": [self.devices.get(d) for d in device_ids],
                "outputs": outputs,
                "values": values,
                "stack_frame_ids": list(ex.code_location.stack_frame_ids),
                "graph_name": graph.name if graph else None,
            }
        )
        return out

    # ------------------------------------------------------------------------------------ graph executions
    from .trace_queries import (
        _kind_rows,
        _kinds_matching,
        _op_kinds,
        _trace_indices,
        _trace_row,
        graph,
        graph_execution,
        graph_executions,
        op,
        op_trace_rows,
    )

    # ------------------------------------------------------------------------------------ sources, frames
    def source_files(self) -> dict[str, Any]:
        return {
            "files": [
                {
                    "index": i,
                    "host": s.host,
                    "path": s.path,
                    "line_count": s.line_count,
                    "is_user": frame_rules.is_user_path(s.path),
                }
                for i, s in enumerate(list(self.sources))
            ]
        }

    def _op_lines(self, index: int) -> list[int]:
        def build():
            return sorted({line for (fi, line, _f, _h) in list(self.frames.values()) if fi == index})

        return self._derive(f"op_lines:{index}", len(self.frames), build)

    def source_file(self, index: int, begin_line: int | None = None, end_line: int | None = None) -> dict[str, Any]:
        if not 0 <= index < len(self.sources):
            raise NotFound(f"source file {index} not found (run has {len(self.sources)})")
        entry = self.sources[index]
        lines = self.source_lines(index)
        count = len(lines)
        b = max(1, begin_line or 1)
        e = min(count, end_line if end_line is not None else count)
        if count == 0:
            b, e = 1, 0
        b = min(b, max(e, 1))
        # lines are str and op lines int: the JSON encoder need not look inside (a source file is ~10,000 lines)
        return {
            "index": index,
            "host": entry.host,
            "path": entry.path,
            "line_count": count,
            "begin_line": b,
            "end_line": e,
            "lines": record_reads.FiniteList(lines[b - 1 : e] if e >= b else []),
            "op_lines": record_reads.FiniteList(self._op_lines(index)),
        }

    def stack_frame(self, frame_id: str) -> dict[str, Any]:
        fr = self.frames.get(frame_id)
        if fr is None:
            raise NotFound(f"stack frame {frame_id!r} not found")
        file_index, line, func, host = fr
        src = self.sources[file_index] if 0 <= file_index < len(self.sources) else None
        path = src.path if src else None
        return {
            "id": frame_id,
            "host": src.host if src else host,
            "path": path,
            "line": line,
            "function": func,
            "source_index": file_index,
            "is_user": frame_rules.is_user_path(path) if path else False,
        }

    def stack_frames(self, ids: Sequence[str]) -> dict[str, Any]:
        return {"frames": [self.stack_frame(i) for i in ids]}

    def root_cause(self) -> dict[str, Any]:
        try:
            mod = importlib.import_module("tensorboard_plugin_dbg.analysis.root_cause")
        except ImportError:
            mod = None
        if mod is not None and hasattr(mod, "analyze"):
            return self._derive("root_cause", self.version, lambda: mod.analyze(self))
        has_alerts = len(self._alert_table()) > 0
        return {
            "status": "unknown" if has_alerts else "clean",
            "message": "Root-cause analysis is not available." if has_alerts else "No non-finite tensor was recorded.",
            "producer": None,
            "producers": 0,
            "propagators": 0,
        }

    def rel_path(self, path: str) -> str:
        return os.path.relpath(path, self.directory)

"""Eager execution queries: pages of digests, one execution in full, and an execution's tensor ids and flags."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..reader import debug_values, tensor_proto
from ..reader.schema import MODE_NAMES, NO_FINITENESS_MODES
from ..wire import types as wire
from . import naming, record_reads
from .errors import NotFound
from .state import RunState


class ExecutionQueries:
    def __init__(self, run: RunState):
        self.run = run

    def _event(self, index: int) -> Any:  # a DebugEvent: protobuf's classes carry no types
        n, arrays = self.run.execs.snapshot()
        if not 0 <= index < n:
            raise NotFound(f"execution {index} not found (run has {n})")
        return self.run.read_event(int(arrays["file"][index]), int(arrays["offset"][index]))

    def _graph_id(self, index: int, arrays: dict[str, npt.NDArray[Any]]) -> str | None:
        run = self.run
        code = int(arrays["graph"][index])
        if code >= 0:
            return run.exec_graph_ids[code]
        op_type = run.exec_op_types[int(arrays["op_type"][index])]
        if not naming.is_function_call(op_type):
            return None
        # TF leaves graph_id empty for GradientTape functions: their traces were written right before this record.
        wall = arrays["wall_time"][index]
        prev = arrays["wall_time"][index - 1] if index > 0 else -np.inf
        t_wall = run.traces.view("wall_time")
        hi = int(np.searchsorted(t_wall, wall, side="right"))
        if hi > 0 and t_wall[hi - 1] > prev:
            graph_id = run.kinds.kinds[int(run.traces.view("kind")[hi - 1])][0]
            named = [g for g in run.graph_chain_ids(graph_id) if run.graphs.get(g) and run.graphs[g].name]
            return named[0] if named else graph_id
        # no traces (TF does not trace backward functions): the function name carries the graph's name
        ids = run.derived.get("graphs_by_name", len(run.graphs), self._graphs_by_name)
        matches = ids.get(naming.function_name(op_type), [])
        return matches[0] if len(matches) == 1 else None

    def _graphs_by_name(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for g in list(self.run.graphs.values()):
            if g.name:
                out.setdefault(g.name, []).append(g.graph_id)
        return out

    def nf_counts(self, rows: npt.NDArray[np.int64], columns: tuple[str, ...]) -> npt.NDArray[np.float64]:
        """(len(rows), len(columns)) of the exec_nf columns at execution rows `rows`: their values for the rows
        that have a non-finite entry, those of a neighbouring entry (or 0) for the others, which callers skip."""
        exec_nf = self.run.exec_nf
        nf_rows = exec_nf.view("row")
        if not len(nf_rows):
            return np.zeros((len(rows), len(columns)))
        at = np.minimum(np.searchsorted(nf_rows, rows), len(nf_rows) - 1)
        return np.stack([exec_nf.view(c)[at] for c in columns], axis=1)

    def digests(self, rows: npt.NDArray[np.int64]) -> list[wire.ExecutionDigest]:
        """wire.ts ExecutionDigest of each execution row (below the published length). The columns are read once
        per page, not once per row and field; marked finite for the JSON encoder when the wall times are."""
        run = self.run
        _n, a = run.execs.snapshot()
        # a row's non-finite counts, where it has some (a count < 0 is unknown: null)
        counts = self.nf_counts(rows, ("neg_inf", "pos_inf", "nan"))
        walls = a["wall_time"][rows]
        op_types, files, graphs = run.exec_op_types, run.files, a["graph"][rows].tolist()
        columns = zip(
            rows.tolist(),
            a["mode"][rows].tolist(),
            a["op_type"][rows].tolist(),
            a["nonfinite"][rows].tolist(),
            walls.tolist(),
            a["num_outputs"][rows].tolist(),
            a["file"][rows].tolist(),
            counts.tolist(),
            a["device"][rows].tolist(),
        )
        devices = run.devices
        out: list[wire.ExecutionDigest] = []
        for k, (i, mode, op_code, nonfinite, wall, num_outputs, file_code, row_counts, device) in enumerate(columns):
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
                    "is_function": graphs[k] >= 0 or naming.is_function_call(op_type),
                    "num_outputs": num_outputs,
                    "host": files[file_code].host,
                    "device": devices.get(device),
                    "tensor_debug_mode": MODE_NAMES.get(mode, "UNSPECIFIED"),
                    "neg_inf": c[0],
                    "pos_inf": c[1],
                    "nan": c[2],
                    "alert": bool(nonfinite),
                    "graph_id": self._graph_id(i, a),
                }
            )
        return record_reads.FiniteList(out) if bool(np.isfinite(walls).all()) else out

    def page(self, begin: int, end: int) -> wire.ExecutionsResponseBody:
        """wire.ts ExecutionsResponse minus `run`."""
        n = self.run.lengths().execs
        end = min(end, n)
        begin = min(begin, end)
        rows = np.arange(begin, end, dtype=np.int64)
        return {"begin": begin, "end": end, "total": n, "executions": self.digests(rows)}

    def detail(self, index: int, max_elements: int = 1000) -> wire.ExecutionDetail:
        """wire.ts ExecutionDetail. Raises NotFound for index >= count."""
        run = self.run
        ex = self._event(index).execution
        digest = self.digests(np.array([index], np.int64))[0]
        mode = int(ex.tensor_debug_mode)
        protos = list(ex.tensor_protos)
        outputs: list[wire.TensorHealth] = []
        values: list[wire.TensorValue | None] = []
        for slot in range(max(int(ex.num_outputs), len(protos))):
            proto = protos[slot] if slot < len(protos) else None
            outputs.append(debug_values.decode_debug_value(mode, proto, eager=True))
            values.append(tensor_proto.tensor_value(proto, 0, max_elements) if mode == 7 else None)
        device_ids = [int(d) for d in ex.output_tensor_device_ids]
        graph = run.graphs.get(digest["graph_id"]) if digest["graph_id"] else None
        return {
            **digest,
            "input_tensor_ids": [int(t) for t in ex.input_tensor_ids],
            "output_tensor_ids": [int(t) for t in ex.output_tensor_ids],
            "output_tensor_device_ids": list(device_ids),
            "output_devices": [run.devices.get(d) for d in device_ids],
            "outputs": outputs,
            "values": values,
            "stack_frame_ids": list(ex.code_location.stack_frame_ids),
            "graph_name": graph.name if graph else None,
        }

    def io(self, index: int) -> tuple[list[int], list[int], list[int]]:
        """(input tensor ids, output tensor ids, per-output flag: 1 non-finite, 0 finite, -1 the mode cannot tell)
        of one execution, read back from its record."""
        ex = self._event(index).execution
        mode = int(ex.tensor_debug_mode)
        out_flags = []
        for proto in ex.tensor_protos:
            bad = debug_values.nonfinite_counts(mode, proto)
            out_flags.append(1 if bad is not None else (-1 if mode in NO_FINITENESS_MODES else 0))
        out_ids = [int(t) for t in ex.output_tensor_ids]
        out_flags += [-1] * (len(out_ids) - len(out_flags))
        return [int(t) for t in ex.input_tensor_ids], out_ids, out_flags

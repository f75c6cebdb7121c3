"""The columnar read interface of protocol.RunQueries for fakes, computed from the fake's own page queries.

A fake run in a unit test writes its rows once, as the wire types of its page queries (graph_executions, op,
executions, execution); this mixin derives from them what the analysis layer reads (trace and execution arrays,
kinds, op entries, the alert list), so a fake need not keep two descriptions of one run in step. Computed on each
call: tests edit the rows between calls (and bump `version`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorboard_plugin_dbg.analysis.health import is_nonfinite
from tensorboard_plugin_dbg.index import alert_order, kind_order
from tensorboard_plugin_dbg.index.derived import DerivedCache
from tensorboard_plugin_dbg.index.exec_outputs import ExecOutputs
from tensorboard_plugin_dbg.index.kind_steps import KindSteps
from tensorboard_plugin_dbg.index.state import OpEntry
from tensorboard_plugin_dbg.reader import health_vectors
from tensorboard_plugin_dbg.reader.schema import MODE_BY_NAME

PAGE = 1000


def _flag(health: Any) -> int:
    value = is_nonfinite(health)
    return -1 if value is None else int(value)


def _health_proto(health: Any) -> bytes | None:
    """A health dict as the serialized float64 debug vector TF would have written (its mode's length)."""
    from tensorboard.compat.proto import tensor_pb2

    vector = health_vectors.vector_of(health)
    vector = vector[: int(np.flatnonzero(~np.isnan(vector)).max()) + 1] if (~np.isnan(vector)).any() else vector[:0]
    if not len(vector):
        return None
    proto = tensor_pb2.TensorProto(dtype=2, tensor_content=vector.astype("<f8").tobytes())
    proto.tensor_shape.dim.add().size = len(vector)
    return proto.SerializeToString()


class ColumnarFromPages:
    version = 1
    done = True
    directory = ""  # in memory: no folder (so never a capsule's replay)
    derived: DerivedCache

    # ------------------------------------------------------------------ what the pages say
    def _trace_rows(self) -> list[dict[str, Any]]:
        total = int(self.graph_executions(0, 0)["unfiltered_total"])
        return [r for b in range(0, total, PAGE) for r in self.graph_executions(b, min(b + PAGE, total))["rows"]]

    def _kind_of(self, row: dict[str, Any]) -> tuple:
        mode = MODE_BY_NAME.get(row["health"].get("mode"), 0)
        return (row["graph_id"], row["op_name"], int(row["output_slot"]), mode, row.get("device_name") or "")

    def _kinds(self) -> list[tuple]:
        return list(dict.fromkeys(self._kind_of(r) for r in self._trace_rows()))

    def _digests(self) -> list[dict[str, Any]]:
        total = int(self.executions(0, 0)["total"])
        return [d for b in range(0, total, PAGE) for d in self.executions(b, min(b + PAGE, total))["executions"]]

    # ------------------------------------------------------------------ protocol.RunQueries, columnar side
    def kind_info(self, kind: int) -> tuple:
        return self._kinds()[kind]

    def trace_arrays(self) -> dict[str, np.ndarray]:
        rows, kinds = self._trace_rows(), self._kinds()
        return {
            "kind": np.array([kinds.index(self._kind_of(r)) for r in rows], np.int32),
            "wall_time": np.array([r["wall_time"] for r in rows], np.float64),
            "loc": np.zeros(len(rows), np.int64),
            "nonfinite_rows": np.array([i for i, r in enumerate(rows) if _flag(r["health"]) == 1], np.uint32),
        }

    def kind_rows(self) -> tuple[np.ndarray, np.ndarray]:
        return kind_order.rows_by_kind(self.trace_arrays()["kind"], len(self._kinds()))

    def op_trace_rows(self, graph_id: str, op_name: str, output_slot: int | None = None) -> np.ndarray:
        rows = [
            i
            for i, r in enumerate(self._trace_rows())
            if (r["graph_id"], r["op_name"]) == (graph_id, op_name)
            and (output_slot is None or int(r["output_slot"]) == output_slot)
        ]
        return np.array(rows, np.int64)

    def op_entry(self, graph_id: str, op_name: str) -> OpEntry | None:
        try:
            info = self.op(graph_id, op_name)
        except LookupError:
            return None
        inputs = [(i["op_name"], int(i["output_slot"])) for i in info["inputs"]]
        frames = list(info.get("stack_frame_ids", []))
        return OpEntry(graph_id, op_name, info["op_type"], inputs, 1, [], frames, "h", None)

    def folded_steps(self) -> tuple[int, KindSteps] | None:
        return None  # the fake indexes nothing: the rules read its vectors back (trace_vectors)

    def trace_vectors(self, rows: np.ndarray, summary: bool = False) -> tuple[np.ndarray, np.ndarray]:
        traces = self._trace_rows()
        picked = [traces[int(i)]["health"] for i in np.asarray(rows, np.int64).tolist()]
        modes = np.array([MODE_BY_NAME.get(h.get("mode"), 0) for h in picked], np.int64)
        return modes, np.array([health_vectors.vector_of(h) for h in picked]).reshape(len(picked), 11)

    def graph_entries(self) -> list[tuple[str, str, str | None]]:
        return [(g, g, None) for g in dict.fromkeys(r["graph_id"] for r in self._trace_rows())]

    def graph_op_names(self, graph_id: str) -> list[str]:
        return []  # the fakes hold no creation order: function inputs stay unlinked

    @property
    def exec_op_types(self) -> list[str]:
        return list(dict.fromkeys(d["op_type"] for d in self._digests()))

    def execution_io(self, index: int) -> tuple[list[int], list[int], list[int]]:
        detail = self.execution(index, max_elements=0)
        outs = [int(t) for t in detail["output_tensor_ids"]]
        health = list(detail.get("outputs") or [])
        flags = [_flag(health[i]) if i < len(health) else -1 for i in range(len(outs))]
        return [int(t) for t in detail["input_tensor_ids"]], outs, flags

    def execution_outputs(self, rows: np.ndarray) -> list[ExecOutputs]:
        out = []
        for index in np.asarray(rows).tolist():
            detail = self.execution(int(index), max_elements=0)
            protos = [_health_proto(h) for h in detail.get("outputs") or []]  # a fake holds healths: encode them
            out.append(ExecOutputs(detail["tensor_debug_mode"], protos))
        return out

    def execution_arrays(self) -> dict[str, np.ndarray]:
        digests, types = self._digests(), self.exec_op_types
        flags = [max(self.execution_io(d["index"])[2], default=-1) for d in digests]
        modes = [MODE_BY_NAME.get(d.get("tensor_debug_mode", "FULL_HEALTH"), 0) for d in digests]
        return {
            "wall_time": np.array([float(d["wall_time"]) for d in digests], np.float64),
            "op_type": np.array([types.index(d["op_type"]) for d in digests], np.int32),
            "num_outputs": np.array([d.get("num_outputs", 1) for d in digests], np.int32),
            "graph": np.full(len(digests), -1, np.int32),
            "mode": np.array(modes, np.int8),
            "nonfinite": np.array([f == 1 for f in flags], np.uint8),
        }

    def alert_table(self, stale_ok: bool = False) -> alert_order.AlertOrder:
        t, e = self.trace_arrays(), self.execution_arrays()
        e_rows = np.flatnonzero(e["nonfinite"])
        return alert_order.build(e_rows, e["wall_time"][e_rows], t["nonfinite_rows"], t["wall_time"])

    def alert_rows(self, page: np.ndarray, src: np.ndarray, rows: np.ndarray, walls: np.ndarray) -> list:
        traces, digests = self._trace_rows(), self._digests()
        out = []
        for p, s, i, w in zip(page.tolist(), src.tolist(), rows.tolist(), walls.tolist()):
            row = traces[i] if s else {**digests[i], "op_name": None, "output_slot": 0, "health": {}}
            out.append(
                {
                    "index": p,
                    "type": "InfNanAlert",
                    "source": "graph_execution" if s else "execution",
                    "source_index": i,
                    "wall_time": w,
                    "op_name": row["op_name"],
                    "op_type": row.get("op_type") or "",
                    "graph_id": row.get("graph_id"),
                    "output_slot": int(row["output_slot"]),
                    **{k: row["health"].get(k) for k in ("neg_inf", "pos_inf", "nan", "size")},
                    "role": None,
                }
            )
        return out

    def alerts(self, begin: int, end: int, alert_type: str | None = None) -> dict[str, Any]:
        table = self.alert_table()
        total = len(table) if alert_type in (None, "", "InfNanAlert") else 0
        page = np.arange(min(begin, total), min(max(end, begin), total))
        return {
            "begin": begin,
            "end": begin + len(page),
            "total": total,
            "totals_by_type": {"InfNanAlert": len(table)} if len(table) else {},
            "alerts": self.alert_rows(page, *table.page(page)),
        }

"""Graph and op queries: one graph with its nesting, one op with its inputs, consumers and their traces."""

from __future__ import annotations

from ..wire import types as wire
from .errors import NotFound
from .state import RunState
from .trace_queries import TraceQueries


class GraphQueries:
    def __init__(self, run: RunState, traces: TraceQueries):
        self.run, self.traces = run, traces

    def graph(self, graph_id: str) -> wire.GraphInfoBody:
        """wire.ts GraphInfo minus `run`."""
        run = self.run
        entry = run.graphs.get(graph_id)
        if entry is None:
            raise NotFound(f"graph {graph_id!r} not found")
        inner: list[wire.GraphRef] = [
            {"graph_id": g.graph_id, "name": g.name} for g in list(run.graphs.values()) if g.outer_id == graph_id
        ]
        return {
            "graph_id": graph_id,
            "name": entry.name,
            "outer_graph_id": entry.outer_id,
            "chain": run.graph_chain(graph_id),
            "inner_graphs": inner,
            "op_count": len(entry.op_names),
        }

    def _summary(self, graph_id: str, op_name: str) -> wire.OpSummary | None:
        op = self.run.ops.get((graph_id, op_name))
        if op is None:
            return None
        return {"graph_id": graph_id, "op_name": op_name, "op_type": op.op_type, "num_outputs": op.num_outputs}

    def op(self, graph_id: str, op_name: str, near: int | None = None) -> wire.OpInfoBody:
        """wire.ts OpInfo minus `run`. `near` picks which trace indices are listed (the nearest 1,000)."""
        run, traces = self.run, self.traces
        entry = run.ops.get((graph_id, op_name))
        if entry is None:
            raise NotFound(f"op {op_name!r} not found in graph {graph_id!r}")
        inputs: list[wire.OpInput] = [
            {
                "slot": i,
                "op_name": producer,
                "output_slot": out_slot,
                "op": self._summary(graph_id, producer),
                "traces": traces.indices(traces.op_rows(graph_id, producer, out_slot), near),
            }
            for i, (producer, out_slot) in enumerate(entry.inputs)
        ]
        by_slot: dict[int, list[wire.OpConsumer]] = {s: [] for s in range(entry.num_outputs)}
        for out_slot, consumer, input_slot in list(run.consumers.get((graph_id, op_name), [])):
            by_slot.setdefault(out_slot, []).append(
                {
                    "input_slot": input_slot,
                    "op_name": consumer,
                    "op": self._summary(graph_id, consumer),
                    "traces": traces.indices(traces.op_rows(graph_id, consumer), near),
                }
            )
        return {
            "graph_id": graph_id,
            "graph_chain": run.graph_chain(graph_id),
            "op_name": op_name,
            "op_type": entry.op_type,
            "device_name": entry.device_name,
            "num_outputs": entry.num_outputs,
            "output_tensor_ids": [int(t) for t in entry.output_tensor_ids],
            "stack_frame_ids": list(entry.stack_frame_ids),
            "host": entry.host,
            "traces": traces.indices(traces.op_rows(graph_id, op_name), near),
            "inputs": inputs,
            "consumers": [{"output_slot": s, "consumers": c} for s, c in sorted(by_slot.items())],
        }

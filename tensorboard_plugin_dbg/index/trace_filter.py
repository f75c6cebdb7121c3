"""The filters of a graph execution trace list, as one value: built once from the request, handed down unchanged
to the queries that resolve it (trace_queries.py), and the key its resolved rows are cached under (derived.py)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class TraceFilter:
    """Which traces a list shows; the fields combine with AND and None (False) means "any". `op_type`: the op's type,
    case-insensitive, whole name; `op_name`: a case-insensitive substring of the op's name; `graph_id`, `device`
    (full name) and `host`: exact (an unknown one matches nothing); `only_nonfinite`: only traces whose tensor holds
    -inf, +inf or NaN. (A tf.function call is not a field: it picks a window of rows, not a property of each row,
    so the rows a filter matches stay cached across calls.)"""

    op_type: str | None = None
    op_name: str | None = None
    graph_id: str | None = None
    only_nonfinite: bool = False
    device: str | None = None
    host: str | None = None

    def by_kind(self) -> bool:
        """Whether the trace kinds (graph, op, slot, mode, device) decide part of it (else: every kind matches)."""
        return self.op_type is not None or bool(self.op_name) or self.graph_id is not None or self.device is not None


NO_FILTER = TraceFilter()  # every trace

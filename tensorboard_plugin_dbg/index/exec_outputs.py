"""Many executions' outputs at once, for whole-run work over eager executions (analysis/compare).

`ExecutionQueries.detail` reads one record per call (a file open, a seek, a parse, the digest's columns): right for
one execution shown, ~0.1 ms each, which made comparing 100 k eager executions take most of a minute. Here a block
of rows costs one pread per run of neighbouring records (record_reads.read_payloads) and one protobuf parse per
record, each output's debug value left serialized for the caller to decode only where it needs to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import numpy.typing as npt

from ..reader import schema
from ..reader.schema import MODE_NAMES
from ..wire.types import DebugModeName
from . import record_reads
from .errors import NotFound

if TYPE_CHECKING:
    from .state import RunState


class ExecOutputs(NamedTuple):
    """One execution's outputs as recorded: its mode's name and, per output slot (max(num_outputs, protos), as
    `execution` lists them), the serialized TensorProto of its debug value (None: none recorded). Decoding is
    left to the caller, who decodes only what it needs (reader/debug_values.decode_debug_value takes the bytes)."""

    mode: DebugModeName
    protos: list[bytes | None]


def execution_outputs(run: RunState, rows: npt.NDArray[np.int64]) -> list[ExecOutputs]:
    """ExecOutputs of each execution row (all below the published length, else NotFound)."""
    n, arrays = run.execs.snapshot()
    rows = np.asarray(rows, np.int64)
    if len(rows) and not (0 <= int(rows.min()) and int(rows.max()) < n):
        raise NotFound(f"execution rows beyond the {n} the run has")
    codes, offsets = arrays["file"][rows], arrays["offset"][rows]
    buf, starts, lengths = record_reads.read_payloads(run, codes, offsets)
    data = buf.tobytes()
    out: list[ExecOutputs] = []
    for k, (start, length) in enumerate(zip(starts.tolist(), lengths.tolist())):
        event = schema.parse_event(data[start : start + length]) if length >= 0 else None
        if event is None:  # a long record (a big FULL_TENSOR value), or one that did not parse: read it alone
            event = run.read_event(int(codes[k]), int(offsets[k]))
        ex = event.execution
        protos: list[bytes | None] = [bytes(p) for p in ex.tensor_protos]  # the schema keeps them serialized
        protos += [None] * (int(ex.num_outputs) - len(protos))
        out.append(ExecOutputs(MODE_NAMES.get(int(ex.tensor_debug_mode), "UNSPECIFIED"), protos))
    return out

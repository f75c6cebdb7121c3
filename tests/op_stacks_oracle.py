"""TensorFlow's own reader (DebugDataReader) as the oracle of which op each source line created: every graph op's
creation stack as (file path, line) pairs, and each op's first non-finite trace (FULL_HEALTH counts), in TF's trace
order. Run in a subprocess so the test process never imports TensorFlow; `python tests/op_stacks_oracle.py DUMP_DIR`
prints one JSON object."""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def oracle(dump_dir: str) -> dict:
    """{"ops": [{graph_id, op_name, op_type, frames: [[path, line], ...] outermost first}],
    "first_nonfinite": {"graph_id/op_name": trace index}, "traced": ["graph_id/op_name" of every traced op]}."""
    sys.path.insert(0, HERE)
    import dumps

    return dumps.run_tf_script(os.path.abspath(__file__), dump_dir)


def _main(dump_dir: str) -> None:
    from tensorflow.python.debug.lib import debug_events_reader

    with debug_events_reader.DebugDataReader(dump_dir) as reader:
        reader.update()
        ops = []
        for digest in reader.graph_op_digests():
            _host, frames = reader.read_graph_op_creation_stack_trace(digest)
            ops.append(
                {
                    "graph_id": digest.graph_id,
                    "op_name": digest.op_name,
                    "op_type": digest.op_type,
                    "frames": [[path, int(line)] for path, line, _func in frames],
                }
            )
        first: dict[str, int] = {}
        traced: set[str] = set()
        for i, trace in enumerate(reader.graph_execution_traces()):
            value = trace.debug_tensor_value  # FULL_HEALTH: [id, device, dtype, rank, size, -inf, +inf, nan, ...]
            key = f"{trace.graph_id}/{trace.op_name}"
            traced.add(key)
            if value and len(value) >= 8 and sum(value[5:8]) > 0 and key not in first:
                first[key] = i
    print(json.dumps({"ops": ops, "first_nonfinite": first, "traced": sorted(traced)}))


if __name__ == "__main__":
    _main(sys.argv[1])

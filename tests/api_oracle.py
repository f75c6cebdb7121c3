"""TensorFlow's own reader (DebugDataReader) as a test oracle, run in a subprocess so the test process (and the
viewer it loads) never imports TensorFlow. `python tests/api_oracle.py DUMP_DIR` prints one JSON object."""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def oracle(dump_dir: str) -> dict:
    """What TF's reader sees in `dump_dir` (see `_main` for the keys)."""
    sys.path.insert(0, HERE)
    import dumps

    return dumps.run_tf_script(os.path.abspath(__file__), dump_dir)


def _main(dump_dir: str) -> None:
    from tensorflow.python.debug.lib import debug_events_reader

    with debug_events_reader.DebugDataReader(dump_dir) as reader:
        reader.update()
        executions = reader.executions()
        traces = reader.graph_execution_traces(digest=True)
        graph_ids = sorted({t.graph_id for t in traces})
        first_stack = reader.read_execution_stack_trace(executions[0])[1] if executions else []
        out = {
            "tf_version": reader.tensorflow_version(),
            "tfdbg_run_id": reader.tfdbg_run_id(),
            "start_time": reader.starting_wall_time(),
            "executions": [
                {
                    "op_type": e.op_type,
                    "num_outputs": e.num_outputs,
                    "wall_time": e.wall_time,
                    "output_tensor_ids": list(e.output_tensor_ids or []),
                    "stack_frame_ids": list(e.stack_frame_ids),
                }
                for e in executions
            ],
            "traces": [
                {
                    "op_name": t.op_name,
                    "op_type": t.op_type,
                    "output_slot": t.output_slot,
                    "graph_id": t.graph_id,
                    "wall_time": t.wall_time,
                }
                for t in traces
            ],
            "source_files": [
                {"host": h, "path": p, "line_count": len(reader.source_lines(h, p))}
                for h, p in reader.source_file_list()
            ],
            "first_execution_stack": [{"path": f[0], "line": f[1], "function": f[2]} for f in first_stack],
            "graphs": {
                g: {"name": reader.graph_by_id(g).name, "outer": reader.graph_by_id(g).outer_graph_id}
                for g in graph_ids
            },
            "ops": {
                f"{t.graph_id}/{t.op_name}": {
                    "op_type": t.op_type,
                    "input_names": list(
                        reader.graph_by_id(t.graph_id).get_op_creation_digest(t.op_name).input_names or []
                    ),
                }
                for t in traces
            },
        }
    print(json.dumps(out))


if __name__ == "__main__":
    _main(sys.argv[1])

"""TF's own reader (DebugDataReader + InfNanMonitor) as the test oracle: a dump as plain Python values.

Run as `python tests/oracle.py DUMP_DIR [--no-values]` it prints the snapshot as JSON, so a test can run it in a
subprocess with a timeout (TF's reader deadlocks on FULL_TENSOR dumps after the first trace).
"""

from __future__ import annotations

import json
import math
import sys


def _num(x):
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    if isinstance(x, list):
        return [_num(v) for v in x]
    return x


def snapshot(dump_dir: str, values: bool = True) -> dict:
    from tensorflow.python.debug.lib import debug_events_monitors, debug_events_reader

    reader = debug_events_reader.DebugDataReader(dump_dir)
    # The monitor reads FULL_TENSOR values back through the reader, which deadlocks: only with values.
    monitor = debug_events_monitors.InfNanMonitor(reader, limit=10**9) if values else None
    reader.update()
    out: dict = {
        "run_id": reader.tfdbg_run_id(),
        "tf_version": reader.tensorflow_version(),
        "start_time": reader.starting_wall_time(),
    }
    out["executions"] = [
        {
            "wall_time": e.wall_time,
            "op_type": e.op_type,
            "output_tensor_device_ids": list(e.output_tensor_device_ids or []),
            "host": e.host_name,
            "stack_frame_ids": list(e.stack_frame_ids or []),
            "mode": int(e.tensor_debug_mode),
            "graph_id": e.graph_id,
            "input_tensor_ids": list(e.input_tensor_ids or []),
            "output_tensor_ids": list(e.output_tensor_ids or []),
            "values": None if e.debug_tensor_values is None else [_num(v) for v in e.debug_tensor_values],
        }
        for e in reader.executions()
    ]
    out["traces"] = [
        {
            "wall_time": t.wall_time,
            "op_type": t.op_type,
            "op_name": t.op_name,
            "output_slot": t.output_slot,
            "graph_id": t.graph_id,
            "graph_ids": list(t.graph_ids),
            "mode": int(t.tensor_debug_mode),
            "device_name": t.device_name,
            "value": _num(t.debug_tensor_value) if values else None,
        }
        for t in reader.graph_execution_traces()
    ]
    graphs, ops = {}, {}
    pending = list(reader.outermost_graphs())
    while pending:
        g = pending.pop()
        graphs[g.graph_id] = {"name": g.name, "outer": g.outer_graph_id, "inner": sorted(g.inner_graph_ids)}
        pending.extend(reader.graph_by_id(i) for i in g.inner_graph_ids)
    for digest in reader.graph_op_digests():
        g = reader.graph_by_id(digest.graph_id)
        ops[f"{digest.graph_id}/{digest.op_name}"] = {
            "op_type": digest.op_type,
            "input_names": list(digest.input_names or []),
            "output_tensor_ids": list(digest.output_tensor_ids or []),
            "num_outputs": digest.num_outputs,
            "stack_frame_ids": list(digest.stack_frame_ids),
            "host": digest.host_name,
            "consumers": sorted([list(c) for c in g.get_op_consumers(digest.op_name)]),
        }
    out["graphs"], out["ops"] = graphs, ops
    out["source_files"] = [[h, p, reader.source_lines(h, p)] for h, p in reader.source_file_list()]
    out["stack_frames"] = {k: list(v) for k, v in reader._stack_frame_by_id.items()}
    out["devices"] = {str(k): v for k, v in reader.device_name_map().items()}
    out["alerts"] = sorted(
        [
            [
                a.wall_time,
                a.op_type,
                a.output_slot,
                a.size,
                a.num_neg_inf,
                a.num_pos_inf,
                a.num_nan,
                a.execution_index,
                a.graph_execution_trace_index,
            ]
            for a in (monitor.alerts() if monitor else [])
        ],
        key=repr,
    )
    return out


if __name__ == "__main__":
    print(json.dumps(snapshot(sys.argv[1], values="--no-values" not in sys.argv)))

// Wire types (see ../wire.ts) of the trace lists: eager executions (the timeline), graph execution traces, a call,
// the minimap, devices.
import type { DebugModeName } from './common.ts';
import type { TensorHealth, TensorValue } from './health.ts';

// ---------------------------------------------------------------------------------------------------------------
// executions / execution — produced by `api/routes.py:executions` and `api/routes.py:execution`
// ---------------------------------------------------------------------------------------------------------------

export interface ExecutionDigest {
  index: number;
  wall_time: number;
  /** Op type for an eager op, function name (e.g. '__inference_train_step_123') for a tf.function call. */
  op_type: string;
  is_function: boolean;
  num_outputs: number;
  host: string;
  /** The device of its first output (full name; an op's outputs are on its device), null without outputs. */
  device: string | null;
  tensor_debug_mode: DebugModeName;
  /** Sum of non-finite counts over the outputs (null where unknown), and whether any output is non-finite. */
  neg_inf: number | null;
  pos_inf: number | null;
  nan: number | null;
  alert: boolean;
  /** The graph a function call ran, from `graph_id` or, when TF left it empty, joined by wall time; null for ops. */
  graph_id: string | null;
}

export interface ExecutionsResponse {
  run: string;
  begin: number;
  end: number;
  total: number;
  executions: ExecutionDigest[];
}

export interface ExecutionDetail extends ExecutionDigest {
  input_tensor_ids: number[];
  output_tensor_ids: number[];
  output_tensor_device_ids: number[];
  /** Device names for each output (resolved from `debugged_device`), null where unknown. */
  output_devices: Array<string | null>;
  /** One entry per output slot; HealthEmpty for an output that was not instrumented. */
  outputs: TensorHealth[];
  /** FULL_TENSOR values per output (first `max_elements`), null entries otherwise. */
  values: Array<TensorValue | null>;
  stack_frame_ids: string[];
  graph_name: string | null;
}

// ---------------------------------------------------------------------------------------------------------------
// graph_executions / graph_execution — produced by `api/routes.py:graph_executions` / `graph_execution`
// ---------------------------------------------------------------------------------------------------------------

export interface GraphExecutionRow {
  index: number;
  wall_time: number;
  op_name: string;
  /** Null when the op is not (yet) in the graphs file. */
  op_type: string | null;
  output_slot: number;
  graph_id: string;
  device_name: string | null;
  host: string;
  health: TensorHealth;
}

export interface GraphExecutionsResponse {
  run: string;
  begin: number;
  end: number;
  /** Rows matching the filters. */
  total: number;
  /** Rows in the run regardless of filters. */
  unfiltered_total: number;
  rows: GraphExecutionRow[];
  /** With the `call` filter: the tf.function call whose traces these are; null without it. */
  call: CallInfo | null;
}

/** One tf.function call opened in Graph Execution — `index/call_queries.py:CallQueries.summary`. */
export interface CallInfo {
  /** The call's eager execution index. */
  index: number;
  op_type: string;
  /** The graph it ran; null when the dump cannot name it. */
  graph_id: string | null;
  graph_name: string;
  /** Traces written while it ran (before the other filters). */
  traces: number;
  /** Its first trace with a NaN/∞ among the rows listed, and that row's position in the list; null when none. */
  first_nonfinite: { index: number; position: number } | null;
}

// ---------------------------------------------------------------------------------------------------------------
// timeline_marks — produced by `analysis/timeline_marks.py:marks`
// ---------------------------------------------------------------------------------------------------------------

export interface TimelineMarksResponse {
  run: string;
  /** The run's eager executions (the timeline's length). */
  executions: number;
  /** Bin i holds executions [edges[i], edges[i + 1]). */
  edges: number[];
  /** NaN/∞ alerts per bin, after the mutes (a graph trace's alert at the call that ran it). */
  counts: number[];
  /** Alert-list index of each bin's first alert; -1 when the bin has none. */
  first_alert: number[];
  /** Visible NaN/∞ alerts in all. */
  alerts: number;
  /** Trace alerts written after the last execution record (a call still running, or whose record was lost). */
  after_last: number;
}

export interface GraphExecutionDetail extends GraphExecutionRow {
  tensor_debug_mode: DebugModeName;
  /** For FULL_TENSOR traces: the value, sliced by the `begin`/`max_elements` parameters. */
  value: TensorValue | null;
  graph_name: string;
  /** Graph ids, outermost first, ending with `graph_id`. */
  graph_chain: string[];
  /** The eager execution (a tf.function call) whose window holds the trace: the first execution record written at
   * or after it; null past the last record. The timeline scrolls to it and marks it. */
  call_index: number | null;
}

// ---------------------------------------------------------------------------------------------------------------
// devices — produced by `api/routes.py:devices` (index in `index/device_queries.py`)
// ---------------------------------------------------------------------------------------------------------------

/** Where ops ran: one device on one host, with how many of the run's records ran there. */
export interface DeviceCount {
  /** Full device name, e.g. '/job:localhost/replica:0/task:0/device:CPU:1'; null: recorded without one. */
  device_name: string | null;
  /** The host whose file set holds the records. */
  host: string;
  graph_executions: number;
  executions: number;
}

/** One host of a multi-host run (file sets sharing a tfdbg_run_id): its traces and when it first went non-finite. */
export interface HostFacts {
  host: string;
  graph_executions: number;
  /** Its earliest graph execution trace (by wall time) holding NaN/∞; null: none. */
  first_nonfinite: HostFirstNonfinite | null;
}

export interface HostFirstNonfinite {
  /** The trace's index in the run's graph execution list. */
  index: number;
  wall_time: number;
  /** Seconds after the first host of the run went non-finite (0 for that host). */
  after_first_s: number;
}

export interface DevicesResponse {
  run: string;
  /** Sorted by device name, then host; only pairs with at least one trace or execution. */
  devices: DeviceCount[];
  /** Every host of the run (RunInfo.hosts). */
  hosts: string[];
  /** Per host, sorted by host (index/device_queries.py host_facts). */
  host_facts?: HostFacts[];
}

/**
 * Wire types: the JSON the backend sends, one type per route response.
 *
 * This module is the contract between `tensorboard_plugin_dbg/api/` and the frontend. Each response type names
 * the Python function that produces it; `tests/test_contract.py` checks real responses against the JSON Schema
 * generated from this file (`npm run schema`), so the two sides cannot drift.
 *
 * Encoding rules (one JSON encoder, `tensorboard_plugin_dbg/api/json_encoding.py`):
 *  - A non-finite float is sent as the string "NaN", "Infinity" or "-Infinity" (see `Num`). Only fields typed
 *    `Num` may carry them; counts and indices are always plain integers.
 *  - numpy scalars and arrays become JSON numbers and arrays.
 *  - Times are wall-clock seconds since the epoch (float).
 *  - Every error is `ErrorResponse` with HTTP 400 (bad parameter) or 404 (unknown run, index, graph, op, frame).
 */

/** A float that may be non-finite. */
export type Num = number | 'NaN' | 'Infinity' | '-Infinity';

export type DebugModeName =
  | 'NO_TENSOR'
  | 'CURT_HEALTH'
  | 'CONCISE_HEALTH'
  | 'FULL_HEALTH'
  | 'SHAPE'
  | 'FULL_NUMERICS'
  | 'FULL_TENSOR'
  | 'UNSPECIFIED';

/** Machine-readable error codes: the constants of `api/errors.py` (its STATUS_BY_CODE gives each one's HTTP status). */
export type ErrorCode =
  | 'bad_parameter'
  | 'missing_parameter'
  | 'page_too_large'
  | 'not_found'
  | 'method_not_allowed'
  | 'not_ready'
  | 'internal';

/** Produced by `api/errors.py:error_body`. */
export interface ErrorResponse {
  error: {
    code: ErrorCode;
    message: string;
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Tensor health: the decoded debug value of one tensor, for every debug mode.
// Produced by `reader/debug_values.py:decode_debug_value` (and `summarize_full_tensor` for FULL_TENSOR).
// ---------------------------------------------------------------------------------------------------------------

export interface HealthNoTensor {
  mode: 'NO_TENSOR';
}
export interface HealthCurt {
  mode: 'CURT_HEALTH';
  tensor_id: number;
  any_inf_or_nan: boolean;
}
export interface HealthConcise {
  mode: 'CONCISE_HEALTH';
  tensor_id: number;
  size: number;
  neg_inf: number;
  pos_inf: number;
  nan: number;
}
export interface HealthFull {
  mode: 'FULL_HEALTH';
  tensor_id: number;
  device_id: number;
  /** DataType name without the DT_ prefix, lower case: 'float32', 'float16', 'bfloat16', 'int32', ... */
  dtype: string;
  rank: number;
  size: number;
  neg_inf: number;
  pos_inf: number;
  nan: number;
  neg: number;
  zero: number;
  pos: number;
}
export interface HealthShape {
  mode: 'SHAPE';
  tensor_id: number;
  dtype: string;
  rank: number;
  size: number;
  /** The last min(rank, 6) dimensions, as recorded (TF keeps only 6). */
  shape: number[];
  /** True when rank > 6 and leading dimensions were not recorded. */
  shape_truncated: boolean;
}
/** Summary of a FULL_TENSOR value (the values themselves come from `graph_execution` / `execution`). */
export interface HealthFullTensor {
  mode: 'FULL_TENSOR';
  dtype: string;
  shape: number[];
  size: number;
  /** Counts are null for non-numeric dtypes (string, bool counted as 0/1, resource ...). */
  neg_inf: number | null;
  pos_inf: number | null;
  nan: number | null;
  neg: number | null;
  zero: number | null;
  pos: number | null;
  /** Over finite elements; null when there are none or the dtype is not numeric. */
  min: Num | null;
  max: Num | null;
  mean: Num | null;
}
/** An eager output that health modes did not instrument (a non-float output): an empty TensorProto placeholder. */
export interface HealthEmpty {
  mode: 'EMPTY';
}
/** Anything the decoder did not understand; the UI shows "unknown" and never throws. */
export interface HealthUnknown {
  mode: 'UNKNOWN';
  reason: string;
}
export type TensorHealth =
  | HealthNoTensor
  | HealthCurt
  | HealthConcise
  | HealthFull
  | HealthShape
  | HealthFullTensor
  | HealthEmpty
  | HealthUnknown;

/** The full value of a FULL_TENSOR tensor, flattened in row-major order, sliced by element range. */
export interface TensorValue {
  dtype: string;
  shape: number[];
  size: number;
  /** Element range [begin, end) of `values` within the flattened tensor. */
  begin: number;
  end: number;
  /** True when end - begin < size. */
  truncated: boolean;
  /** Numbers for numeric dtypes, booleans for bool, strings (UTF-8, invalid bytes replaced) for string. */
  values: Array<Num | boolean | string>;
}

// ---------------------------------------------------------------------------------------------------------------
// runs — produced by `api/routes.py:runs`
// ---------------------------------------------------------------------------------------------------------------

/**
 * Every notice code the backend sends. Problems with the dump's files come from `index/run_status.py` and
 * `index/catalog.py` (unreadable folders, failed refresh passes); the explanations of an empty panel from
 * `index/run_status.py`, and `no_dump_found` from `index/catalog.py` and `plugin.py`.
 */
export type NoticeCode =
  // Problems
  | 'damaged_record'
  | 'refresh_failed'
  | 'unreadable_file'
  | 'missing_file'
  | 'partial_record'
  // Explanations
  | 'circular_buffer'
  | 'no_tensor_mode'
  | 'eager_only'
  | 'no_dump_found'
  | 'scanning'
  | 'no_graph_executions'
  | 'no_executions'
  | 'still_indexing';

/** A problem or explanation shown to the user (status line, empty-panel reason). */
export interface Notice {
  code: NoticeCode;
  severity: 'error' | 'warning' | 'info';
  message: string;
  /** Path relative to the run's directory, when the notice is about one file. */
  file?: string;
  /** Byte offset in that file. */
  offset?: number;
}

export interface RunCounts {
  executions: number;
  graph_executions: number;
  graphs: number;
  ops: number;
  source_files: number;
  stack_frames: number;
  alerts: number;
  alerts_by_type: Record<string, number>;
}

export interface RunStatus {
  bytes_read: number;
  bytes_total: number;
  /** True once a refresh pass has read every file to its end (it turns false again when files grow). */
  done: boolean;
  /** Wall time of the last completed refresh pass, null before the first. */
  last_refresh: number | null;
  notices: Notice[];
}

export interface RunInfo {
  /** Directory relative to the logdir (for a dump directly in the logdir: the logdir's folder name, or '.' when a
   * sub-folder has that name), plus '#<run id prefix>' when one directory holds several run ids. Stable: use it as
   * the `run` parameter. */
  name: string;
  start_time: number | null;
  tf_version: string | null;
  tfdbg_run_id: string | null;
  hosts: string[];
  debug_modes: DebugModeName[];
  counts: RunCounts;
  status: RunStatus;
  /** Added by `api/routes.py:runs` from `analysis/run_verdict.py:summary` (cached values only, never computed). */
  summary: RunSummary;
}

/** The first NaN/∞ of a run: its producing op and the user's line. */
export interface FirstNan {
  op_name: string | null;
  op_type: string;
  /** Name of the producer's graph (the tf.function), null for eager ops or when unknown. */
  graph_name: string | null;
  wall_time: number;
  file: string | null;
  line: number | null;
}

/** One run's line in the runs overview. indexing: not fully read; analyzing: read, root cause not built yet. */
export interface RunSummary {
  status: 'indexing' | 'analyzing' | 'clean' | 'found' | 'unknown';
  first_nan: FirstNan | null;
}

export interface RunsResponse {
  logdir: string;
  runs: RunInfo[];
  /** Logdir-level notices, e.g. 'no_dump_found' with where it looked. */
  notices: Notice[];
}

// ---------------------------------------------------------------------------------------------------------------
// alerts — produced by `api/routes.py:alerts`
// ---------------------------------------------------------------------------------------------------------------

/**
 * InfNanAlert: a NaN/∞ (the index's alert list). The others are the alert rules (analysis/rules/config.py):
 * retracing, output shape/dtype change across steps, all-zero tensors, dead ReLUs, value explosion/vanishing.
 */
export type AlertType =
  | 'InfNanAlert'
  | 'retracing'
  | 'shape_change'
  | 'dtype_change'
  | 'all_zero'
  | 'dead_relu'
  | 'value_explosion'
  | 'value_vanishing';

export interface Alert {
  /** Position in the run's wall-time ordered alert list (what begin/end page over). */
  index: number;
  type: AlertType | string;
  /** Which list the tensor lives in. */
  source: 'execution' | 'graph_execution';
  /** Index in that list. */
  source_index: number;
  wall_time: number;
  /** Graph op name; for an eager execution, null. */
  op_name: string | null;
  op_type: string;
  graph_id: string | null;
  output_slot: number;
  /** Counts that triggered it; null where the mode does not record them (CURT_HEALTH records only "any"). */
  neg_inf: number | null;
  pos_inf: number | null;
  nan: number | null;
  size: number | null;
  /**
   * Root-cause classification (analysis/classify.py, containment.py); null until the analysis has run, or finite.
   * producer: its inputs were finite; unknown: some input was not recorded (a function input whose caller's tensor
   * is not in the dump, a record a circular buffer dropped); propagator: an input was already non-finite;
   * contained: the ops reading it gave finite outputs this step (a -inf mask before a softmax); expected: the same
   * tensor was contained in an earlier step.
   */
  role: AlertRole | null;
  /** Rule findings only (analysis/rules/findings.py finding): the step (0-based k-th trace) it is about. */
  step?: number;
  /** Rule findings: how many (traces of a function, consecutive steps, changes). */
  count?: number;
  /** Rule findings: what was seen, in words (shapes before/after, steps all zero, what differed between traces). */
  evidence?: string;
  /** Rule findings: the user's line (the op's creation, or a retraced function's call site). */
  user_frame?: StackFrame | null;
  source_line?: string | null;
  /** Retracing: the function's name and its traces' graph ids. */
  function?: string;
  graph_ids?: string[];
}

/** A rule this dump cannot judge: the modes it needs and the call that records them (analysis/rules needs()). */
export interface RuleNeed {
  rule: AlertType;
  title: string;
  needs: DebugModeName[];
  call: string;
}

/** What the request's mutes hid: in all, and per mute in request order (an alert two mutes match counts in both). */
export interface MutedCounts {
  total: number;
  by_mute: number[];
}

/** One node of the graph around an op (analysis/neighborhood.py neighborhood). */
export interface NeighborhoodNode {
  /** `graph_id:op_name` for an op, `exec:N` for the eager execution a function input came from. */
  id: string;
  kind: 'op' | 'execution';
  graph_id: string | null;
  op_name: string | null;
  op_type: string;
  /** Hops from the focused op: negative upstream, positive downstream. */
  depth: number;
  /** The op's trace of the focused step (graph_executions index); null when the op has none. */
  trace_index: number | null;
  execution_index?: number;
  output_slot?: number;
  health: TensorHealth | null;
  role: AlertRole | null;
  device: string | null;
  /** On a path from the root cause's producer to the focused op. */
  on_path: boolean;
  /** Edges not followed (the hop limit or the node cap). */
  more_up: number;
  more_down: number;
  /** For a function input: where its value came from, or why that cannot be known. */
  link?: string;
}

export interface NeighborhoodEdge {
  source: string;
  source_slot: number;
  target: string;
  target_slot: number;
  /** The edge crosses a function boundary (a caller's tensor into a function input, a call into its graph). */
  cross_graph: boolean;
}

export interface NeighborhoodResponse {
  run: string;
  graph_id: string;
  op_name: string;
  hops: number;
  direction: 'up' | 'down' | 'both';
  near: number | null;
  nodes: NeighborhoodNode[];
  edges: NeighborhoodEdge[];
  /** The node cap was reached: some edges end in a `more` count. */
  truncated: boolean;
  /** What the picture cannot show (no control edges in a dump). */
  notes: string[];
}

export type AlertRole = 'producer' | 'unknown' | 'propagator' | 'contained' | 'expected';

export interface AlertsResponse {
  run: string;
  begin: number;
  end: number;
  /** Total matching the `type` filter (or all). */
  total: number;
  totals_by_type: Record<string, number>;
  alerts: Alert[];
  muted: MutedCounts;
  /** Rules whose data this dump lacks (empty until the dump is read to its end). */
  needs: RuleNeed[];
  /** The rules' whole-run pass is still running (or the dump is still being read): their findings come later. */
  rules_pending: boolean;
}

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

export interface DevicesResponse {
  run: string;
  /** Sorted by device name, then host; only pairs with at least one trace or execution. */
  devices: DeviceCount[];
  /** Every host of the run (RunInfo.hosts). */
  hosts: string[];
}

// ---------------------------------------------------------------------------------------------------------------
// graph / op — produced by `api/routes.py:graph` / `op`
// ---------------------------------------------------------------------------------------------------------------

export interface GraphRef {
  graph_id: string;
  name: string;
}

export interface GraphInfo {
  run: string;
  graph_id: string;
  name: string;
  outer_graph_id: string | null;
  /** Outermost first, ending with this graph. */
  chain: GraphRef[];
  inner_graphs: GraphRef[];
  op_count: number;
}

/** Trace indices of one op output (or of the whole op), capped. */
export interface TraceIndices {
  /** Number of traces. */
  count: number;
  /** Up to 1,000 indices into graph_executions: the nearest to `near` when given, else the first. */
  indices: number[];
}

export interface OpSummary {
  graph_id: string;
  op_name: string;
  op_type: string;
  num_outputs: number;
}

export interface OpInput {
  /** Input slot of the focused op. */
  slot: number;
  op_name: string;
  /** Output slot of the producing op. */
  output_slot: number;
  /** Null when the producing op is not in the graph (should not happen, but dumps can be partial). */
  op: OpSummary | null;
  /** Traces of that producing op's output slot. count 0 means "not traced" (e.g. a function-input Placeholder). */
  traces: TraceIndices;
}

export interface OpConsumer {
  /** Input slot of the consumer. */
  input_slot: number;
  op_name: string;
  op: OpSummary | null;
  traces: TraceIndices;
}

export interface OpInfo {
  run: string;
  graph_id: string;
  graph_chain: GraphRef[];
  op_name: string;
  op_type: string;
  device_name: string | null;
  num_outputs: number;
  output_tensor_ids: number[];
  stack_frame_ids: string[];
  host: string | null;
  /** Traces of this op (all output slots). */
  traces: TraceIndices;
  inputs: OpInput[];
  /** One entry per output slot, each listing its consumers. */
  consumers: Array<{ output_slot: number; consumers: OpConsumer[] }>;
}

// ---------------------------------------------------------------------------------------------------------------
// source_files / source_file / stack_frames — produced by `api/routes.py:source_files`, `source_file`,
// `stack_frames`
// ---------------------------------------------------------------------------------------------------------------

export interface SourceFileRef {
  index: number;
  host: string;
  path: string;
  line_count: number;
  /** True for the user's code (not TensorFlow, Keras, site-packages or the standard library). */
  is_user: boolean;
}

export interface SourceFilesResponse {
  run: string;
  files: SourceFileRef[];
}

export interface SourceFileResponse {
  run: string;
  index: number;
  host: string;
  path: string;
  line_count: number;
  /** 1-based, inclusive. */
  begin_line: number;
  end_line: number;
  lines: string[];
  /** 1-based lines of this file at which some op was created (graph ops and eager executions). */
  op_lines: number[];
}

// ---------------------------------------------------------------------------------------------------------------
// source_line_counts / line_ops — produced by `api/routes.py:source_line_counts`, `line_ops` (analysis in
// `analysis/source_lines.py` over the index's map `index/line_ops.py`). An op is listed at the innermost frame of
// its creation stack in each user file; `direct` where that frame is its innermost user frame.
// ---------------------------------------------------------------------------------------------------------------

/** One line that created graph ops. */
export interface SourceLineCount {
  line: number;
  /** Graph ops listed at this line. */
  ops: number;
  /** Of those, made directly here (the rest through a call this line makes). */
  direct: number;
  /** Of those, ops with a non-finite output in some trace. */
  nonfinite: number;
}

export interface SourceLineCountsResponse {
  run: string;
  index: number;
  /** Sum of `ops` over the lines. */
  total_ops: number;
  lines: SourceLineCount[];
}

export interface LineOp {
  graph_id: string;
  graph_name: string;
  op_name: string;
  op_type: string;
  /** Made directly by this line (not through a call it makes). */
  direct: boolean;
  /** TensorFlow recorded its health: a trace in a mode that counts NaN/∞ (not NO_TENSOR or SHAPE). Function-input
   * placeholders, for one, are never traced. */
  traced: boolean;
  nonfinite_traces: number;
  /** graph_executions index of its first trace with -inf, +inf or NaN; null when none. */
  first_nonfinite: number | null;
}

export interface LineOpsResponse {
  run: string;
  index: number;
  line: number;
  /** Ops listed at this line; `direct` and `nonfinite` count among them. */
  total: number;
  direct: number;
  nonfinite: number;
  begin: number;
  end: number;
  /** Non-finite ones first, then direct ones, each group in creation order. */
  rows: LineOp[];
}

export interface StackFrame {
  id: string;
  host: string | null;
  /** Null while the frame's source file record has not arrived (it is resolved later, never dropped). */
  path: string | null;
  line: number;
  function: string;
  source_index: number;
  is_user: boolean;
}

export interface StackFramesResponse {
  run: string;
  frames: StackFrame[];
}

// ---------------------------------------------------------------------------------------------------------------
// root_cause — produced by `api/routes.py:root_cause` (analysis in `analysis/root_cause.py`)
// ---------------------------------------------------------------------------------------------------------------

export interface RootCauseInput {
  /** Input slot of the producer op. */
  slot: number;
  op_name: string;
  output_slot: number;
  op_type: string | null;
  /** False when TF did not trace that tensor (e.g. a function-input Placeholder, a gradient graph). */
  traced: boolean;
  /** Its most recent health before the producer ran; null when not traced. */
  health: TensorHealth | null;
  /** Index of that trace in graph_executions; null when not traced. */
  graph_execution_index: number | null;
  /** The eager execution whose output it was (an eager input, or what the caller passed into a function input). */
  execution_index: number | null;
  /** Human sentence, e.g. "probs:0 — 1 zero among 1,000 elements" or "not traced by TensorFlow". */
  description: string;
  /** Non-finite as in earlier runs where its consumers absorbed it (not what broke this op). */
  expected?: boolean;
  /** Not recorded, but known not to matter (not a floating-point tensor) or followed to the caller's tensor. */
  linked?: boolean;
}

/** The forward op a gradient op differentiates (analysis/gradients.py forward_op): the line to fix. */
export interface RootCauseForward {
  op_name: string;
  op_type: string;
  user_frame: StackFrame | null;
  source_line: string | null;
}

/** The data carried the NaN (analysis/producer.py _data): which batch and, with FULL_TENSOR, where. */
export interface RootCauseData {
  /** 0-based: the iterator op's run that handed it out. */
  batch: number;
  /** Index tuples of the first non-finite elements; null when the mode records no values. */
  positions: number[][] | null;
  note: string;
  /** The pipeline's first dataset op (e.g. TensorSliceDataset) and the user's line that made it. */
  source_op: string | null;
  user_frame: StackFrame | null;
  source_line: string | null;
}

/** A contained non-finite source the analysis skipped (analysis/explain.py skipped). */
export interface RootCauseSkip {
  op_name: string;
  op_type: string;
  graph_execution_index: number;
  /** How many of its runs were contained before the root cause. */
  runs: number;
  user_frame: StackFrame | null;
  source_line: string | null;
  description: string;
}

export interface RootCauseProducer {
  alert: Alert;
  /** producer: its inputs were recorded finite; unknown: some input was not recorded (see its description). */
  role: 'producer' | 'unknown';
  /** 0-based: how many times this op (or eager op type) ran before. */
  run_number: number;
  op_name: string | null;
  op_type: string;
  graph_id: string | null;
  output_health: TensorHealth;
  inputs: RootCauseInput[];
  /** False when the inputs' health cannot be known (CURT_HEALTH, untraced inputs, eager inputs). */
  inputs_known: boolean;
  stack_frame_ids: string[];
  /** Innermost frame in user code (not TensorFlow, Keras, site-packages, the standard library). */
  user_frame: StackFrame | null;
  /** Text of the user frame's line, when the source file is in the dump. */
  source_line: string | null;
  /** Set when the producer is a gradient op: the forward op, whose line is the one to fix. */
  forward: RootCauseForward | null;
  /** Set when an input pipeline's op handed out the first non-finite tensor. */
  data: RootCauseData | null;
  /** e.g. "overflow of float16's range (its largest finite value is 65504)"; null otherwise. */
  overflow: string | null;
  /** Name of `graph_id`'s graph (the tf.function), from `analysis/run_verdict.py`; null when unknown. */
  graph_name: string | null;
  /** Where it ran: the trace's device, or the execution's first output's (full name); null when not recorded. */
  device: string | null;
}

export interface RootCauseResponse {
  run: string;
  /** clean: no non-finite tensor; clean_so_far: none in what was read, but the run is not fully read yet
   * (`analysis/run_verdict.py:root_cause`); found: a producer was identified; unknown: non-finite seen, cause
   * unknowable. */
  status: 'clean' | 'clean_so_far' | 'found' | 'unknown';
  /** One sentence for the user, including what cannot be known. */
  message: string;
  producer: RootCauseProducer | null;
  /** Contained non-finite sources passed over on the way to the producer. */
  skipped: RootCauseSkip[];
  /** A circular buffer dropped earlier records: the producer is the first non-finite tensor kept. */
  first_kept: boolean;
  /** Alert counts by role (producers include the unknowns; contained include the expected). */
  producers: number;
  propagators: number;
  contained: number;
  /** Producers hidden by the request's mutes that came before the one shown (or all of them when none is left). */
  muted: number;
  /** This run's section of the headless report, word for word (`analysis/report_text.py:run_section`): what the
   * card's "copy as text" copies. */
  report_text: string;
}

// ---------------------------------------------------------------------------------------------------------------
// tensor, tensor_inputs — produced by `api/routes.py:tensor` / `tensor_inputs` (analysis in
// `analysis/tensor_values.py`, `tensor_stats.py`, `tensor_slices.py`). `tensor.npy` is binary (application/
// octet-stream): the .npy file of a FULL_TENSOR value, bit-exact; bfloat16 as its raw 16-bit words (<u2).
// ---------------------------------------------------------------------------------------------------------------

/** Which tensor: `index/tensor_queries.py:TensorRecord.describe`. graph: a graph execution trace (output = its
 * slot); eager: an execution's output. */
export interface TensorRef {
  source: 'graph' | 'eager';
  index: number;
  output: number;
  op_name: string | null;
  op_type: string | null;
  graph_id: string | null;
  wall_time: number;
  tensor_debug_mode: DebugModeName;
}

/** Whole-tensor numbers (`analysis/tensor_stats.py:compute`). Classes and stats are of the values, of the
 * modulus |z| for complex (`of`), none for strings (counts null). min/max/mean/std: of the finite elements. */
export interface TensorStats {
  of: 'values' | 'modulus' | 'none';
  count: number;
  nan: number | null;
  neg_inf: number | null;
  pos_inf: number | null;
  neg: number | null;
  zero: number | null;
  pos: number | null;
  min: Num | null;
  max: Num | null;
  mean: Num | null;
  std: Num | null;
}

/** Histogram of the finite elements: counts[i] in [edges[i], edges[i + 1]); the non-finite counts beside it. */
export interface TensorHistogram {
  edges: Num[];
  counts: number[];
  nan: number;
  neg_inf: number;
  pos_inf: number;
}

/** Non-finite elements per index along one axis (only indices holding some; the first 1,000). */
export interface AxisCounts {
  index: number[];
  count: number[];
  truncated: boolean;
}

/** Where the non-finite elements are (`analysis/tensor_stats.py:_nonfinite`). */
export interface NonFinitePositions {
  total: number;
  /** The first 100 positions in C order, each an index tuple. */
  positions: number[][];
  truncated: boolean;
  /** One entry per axis; null for an axis longer than 2^20. */
  per_axis: Array<AxisCounts | null>;
}

/** Values of a numpy basic slice (`analysis/tensor_values.py:slice_values`), flattened in C order of `shape`. */
export interface TensorSlice {
  /** The slice as parsed, one item per axis (e.g. "0,1:3,:"). */
  spec: string;
  shape: number[];
  /** Numbers (bfloat16 widened to float32), booleans, complex as "(re+imj)" text, strings as text. */
  values: Array<Num | boolean | string>;
}

/** Produced by `api/routes.py:tensor`. Without values (not FULL_TENSOR), `health` says what the mode carries
 * and `note` how to record values; dtype/shape/size come from the health where it has them. */
export interface TensorResponse {
  run: string;
  tensor: TensorRef;
  dtype: string | null;
  shape: number[] | null;
  size: number | null;
  has_values: boolean;
  note: string | null;
  health: TensorHealth | null;
  stats: TensorStats | null;
  histogram: TensorHistogram | null;
  nonfinite: NonFinitePositions | null;
  slice: TensorSlice | null;
}

export interface TensorInput {
  slot: number;
  /** e.g. "shifted:0" or "Sub:0 (execution #19)". */
  name: string;
  /** The latest recorded tensor of this input before the op ran; null when none was recorded. */
  tensor: TensorRef | null;
  description: string;
}

/** Produced by `api/routes.py:tensor_inputs`: the data inputs of the tensor's op. */
export interface TensorInputsResponse {
  run: string;
  tensor: TensorRef;
  inputs: TensorInput[];
}

/** One row of the health map: an op's output slot over its steps, binned (analysis/health_map.py health_map). */
export interface HealthMapRow {
  kind: number;
  graph_id: string;
  op_name: string;
  op_type: string;
  output_slot: number;
  /** How many times this output was traced (its steps). */
  steps: number;
  first_nonfinite_step: number | null;
  /** Per cell: traces holding NaN/∞. */
  nonfinite: number[];
  /** Per cell: the cell's trace's zero fraction (FULL_HEALTH), null where unknown. */
  zero: (number | null)[];
  /** Per cell: shape or dtype differs from the previous cell's. */
  changed: boolean[];
  /** Per cell: the graph_executions index it stands for (first non-finite, else the bin's last); -1 none. */
  trace: number[];
}

/** analysis/health_map.py health_map: ops (NaN/∞ first) x step bins. */
export interface HealthMapResponse {
  run: string;
  begin: number;
  end: number;
  /** Rows (op output slots) in all. */
  total: number;
  /** The most steps of any row. */
  steps: number;
  step_begin: number;
  step_end: number;
  /** Steps per cell. */
  bin: number;
  columns: number;
  rows: HealthMapRow[];
}

// Wire types (see ../wire.ts) of Source Code and Stack Trace: files, per-line op markers, a line's ops, frames.

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

// Wire types (see ../wire.ts): comparing two runs (issue #27).

import type { CallInfo, GraphExecutionRow } from './traces.ts';

// ---------------------------------------------------------------------------------------------------------------
// compare — produced by `api/routes/compare.py:compare` (analysis in `analysis/compare/`)
// ---------------------------------------------------------------------------------------------------------------

/** One op of one run: a graph trace (`source` "graph", `index` into graph_executions) or an eager execution. */
export interface CompareSide {
  source: 'graph' | 'eager';
  index: number;
  /** Graph op name; null for an eager execution. */
  op_name: string | null;
  op_type: string | null;
  /** Function name without TensorFlow's numeric suffix (graph ops). */
  function: string | null;
  graph_id: string | null;
  output: number;
  /** The k-th trace of this (function, op, output) in its run (the k-th execution of this op type, eager). */
  occurrence: number;
  /** The user's innermost frame where the op was made (or the eager op ran); null when none was recorded. */
  file: string | null;
  line: number | null;
  code: string | null;
}

/** How two aligned tensors differ (only the fields their tensor_debug_mode can tell). */
export interface CompareMetric {
  differs: boolean;
  /** Human sentence, e.g. "max abs 0.5, max rel 0.25, ..." or "zero 0 → 300". */
  summary: string;
  dtype_a?: string;
  dtype_b?: string;
  shape_a?: number[];
  shape_b?: number[];
  bitwise_equal?: boolean;
  max_abs?: number | null;
  max_rel?: number | null;
  mean_abs?: number | null;
  cosine?: number | null;
  nan_only_one_side?: number;
  /** Health modes: the differing counts, column -> [A, B]. */
  counts?: Record<string, number[]>;
}

export interface CompareInput {
  /** The B op's input `producer:slot`. */
  name: string;
  status: 'same' | 'differs' | 'only_in_b' | 'not_recorded';
  a: CompareSide | null;
  b: CompareSide | null;
  metric: CompareMetric | null;
}

/** The first divergence: the earliest tensor in B that differs while its aligned inputs do not. */
export interface CompareFinding {
  kind: 'value' | 'op_type' | 'follows_from_only_in_b' | 'only_in_b' | 'only_in_a';
  why: string;
  a: CompareSide | null;
  b: CompareSide | null;
  metric: CompareMetric | null;
  inputs: CompareInput[];
  /** Ops only B runs that the difference follows from. */
  only_in_b_ops: CompareSide[];
}

/** One differing pair, in B's order. */
export interface CompareItem {
  position: number;
  a: CompareSide;
  b: CompareSide;
  metric: CompareMetric;
}

export interface CompareCounts {
  matched: number;
  divergent: number;
  only_in_a: number;
  only_in_b: number;
  matched_traces: number;
  matched_executions: number;
  /** `divergent` split: differing graph traces (what Graph Execution's "divergent only" lists) + eager executions. */
  divergent_traces: number;
  divergent_executions: number;
  /** Graph traces only run B holds (part of `only_in_b`): Graph Execution's "divergent only" lists them too. */
  only_in_b_traces: number;
}

export interface CompareResponse {
  /** Run B (under suspicion) and run A (the baseline). */
  run: string;
  base: string;
  mode: string;
  counts: CompareCounts;
  first_divergence: CompareFinding | null;
  /** Differing pairs [begin, end) in B's order; `total` = counts.divergent. */
  divergent: CompareItem[];
  begin: number;
  end: number;
  total: number;
  only_in_a: CompareSide[];
  only_in_b: CompareSide[];
  notes: string[];
}

// ---------------------------------------------------------------------------------------------------------------
// compare_rows, compare_traces — produced by `api/routes/compare_rows.py` (`analysis/compare/rows.py`)
// ---------------------------------------------------------------------------------------------------------------

/** How one graph trace of run B differs from its aligned trace in run A. */
export interface TraceDifference {
  /** differs: beyond tolerance; same: within it; only_in_b: A holds no aligned trace; not_compared: nothing both
   * runs record (NO_TENSOR). */
  status: 'differs' | 'same' | 'only_in_b' | 'not_compared';
  /** A table cell: "=" (equal), "0.5 / 0.25" (FULL_TENSOR max abs / max rel), "NaN 0→3" (health counts), "only in
   * B"; "" when not compared. */
  text: string;
  /** The whole difference in words (a tooltip). */
  summary: string;
  /** FULL_TENSOR: the max abs difference; null otherwise. */
  magnitude: number | null;
}

/** Run B's graph execution traces [begin, end) under the filters, each with its difference from run A. */
export interface CompareRowsResponse {
  run: string;
  /** Run A, the baseline. */
  base: string;
  begin: number;
  end: number;
  /** Rows matching the filters (and, with divergent_only, differing from A). */
  total: number;
  unfiltered_total: number;
  rows: GraphExecutionRow[];
  /** differences[i] is rows[i]'s. */
  differences: TraceDifference[];
  call: CallInfo | null;
}

/** The differences of the given graph traces of run B (Graph Structure's nodes), in the order asked. */
export interface CompareTracesResponse {
  run: string;
  base: string;
  indices: number[];
  differences: TraceDifference[];
}

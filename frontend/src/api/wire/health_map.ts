// Wire types (see ../wire.ts): The health map and the sparkline (op x step).

// ---------------------------------------------------------------------------------------------------------------
// health_map — produced by `api/routes.py:health_map` (analysis in `analysis/health_map.py`)
// ---------------------------------------------------------------------------------------------------------------

/** One row of the health map: an op's output slot over its steps, binned (analysis/health_map.py health_map). */
export interface HealthMapRow {
  kind: number;
  graph_id: string;
  /** The graph's name (the tf.function's), numbered where two graphs share it ("train_step #2"): op names repeat
   * in a retraced function, the graph tells the rows apart (analysis/health_map.py graph_labels). */
  graph_name: string;
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

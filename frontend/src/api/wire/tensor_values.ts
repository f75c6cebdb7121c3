// Wire types (see ../wire.ts): The Tensor Values view.
import type { DebugModeName, Num } from './common.ts';
import type { TensorHealth } from './health.ts';

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

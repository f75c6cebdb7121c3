// Wire types (see ../wire.ts): Tensor health: the decoded debug value of one tensor, in every debug mode.
import type { Num } from './common.ts';

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

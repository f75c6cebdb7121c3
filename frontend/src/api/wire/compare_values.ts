// Wire types (see ../wire.ts): one tensor of run B beside its counterpart in run A, and A − B (issue #27).

import type { Num } from './common.ts';
import type { CompareMetric } from './compare.ts';
import type { TensorResponse } from './tensor_values.ts';

// ---------------------------------------------------------------------------------------------------------------
// compare_values — produced by `api/routes/compare_values.py:compare_values` (analysis/compare/values.py)
// ---------------------------------------------------------------------------------------------------------------

/** A − B over the requested slice of two FULL_TENSOR values of one shape, element by element. */
export interface TensorDifference {
  /** The slice as parsed (the same for A, B and A − B). */
  spec: string;
  shape: number[];
  /** A − B per element of the slice in C order (both NaN, or the same ±∞: 0; NaN on one side: NaN). */
  values: Num[];
  /** The largest finite |A − B| in the slice (null: the slice holds none). */
  max_abs: Num | null;
  /** Full index into the tensor of that element (null with max_abs). */
  argmax: number[] | null;
  /** Elements of the slice whose difference is not finite (NaN or ∞ on one side only). */
  nonfinite: number;
}

/** Health modes: each count both records hold, as [A, B, A − B] (the run's own tensor and device ids left out). */
export interface HealthDifference {
  counts: Record<string, Num[]>;
  /** Fields that are not counts and differ (dtype, shape), as "A → B" text. */
  changed: string[];
}

/** Produced by `api/routes/compare_values.py`: B's tensor, its aligned counterpart in A, and A − B. */
export interface CompareValuesResponse {
  /** Run B (under suspicion; the tensor asked for) and run A (the baseline). */
  run: string;
  base: string;
  b: TensorResponse;
  /** The aligned tensor of run A, with the same slice; null when only B holds it. */
  a: TensorResponse | null;
  status: 'paired' | 'only_in_b';
  /** How the whole tensors differ (the comparison's measure); null when only B holds it. */
  metric: CompareMetric | null;
  /** FULL_TENSOR with a slice and the same shape on both sides; else null (`note` says why). */
  difference: TensorDifference | null;
  health_difference: HealthDifference | null;
  note: string | null;
}

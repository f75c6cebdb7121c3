// Wire types (see ../wire.ts): a capsule's batch per sample, one batch array at a time (#36).

// ---------------------------------------------------------------------------------------------------------------
// capsule_samples — produced by `api/routes/capsules.py:capsule_samples` (analysis/capsule_sample_table.py:page)
// ---------------------------------------------------------------------------------------------------------------

/** One sample (first axis) of one batch array. */
export interface CapsuleSampleRow {
  sample: number;
  /** NaN/±∞ elements of the sample. */
  nonfinite: number;
  /** Smallest finite element; null when the sample has none. */
  min: number | null;
  /** Largest finite |x|; null when the sample has none. */
  max_abs: number | null;
  /** Finite elements below 0. */
  negatives: number;
  /** Elements equal to 0. */
  zeros: number;
  /** The replay's root cause points at this sample (it holds the element named). */
  marked: boolean;
}

/** A page of one batch array's per-sample table: the rows the root cause points at first, then the non-finite
 * ones, then by max |x|. */
export interface CapsuleSamplesResponse {
  capsule: string;
  array: string;
  /** Every batch array of the capsule (one table each). */
  arrays: string[];
  /** Samples of this array. */
  total: number;
  begin: number;
  end: number;
  /** Samples the root cause points at (0 before a replay). */
  marked: number;
  /** The root cause's sentence that marks them, null when none does. */
  marked_by: string | null;
  rows: CapsuleSampleRow[];
}

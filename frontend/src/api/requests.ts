/**
 * What a request names, as plain data: the Graph Execution list's filters and one debug tensor. The store holds
 * them (`State.geFilters`, the Tensor Values view's target) and the client sends them; they live apart from the
 * client so that the store and the panels read them without reaching the module that fetches.
 */
import type { Alert, CapsuleArrayGroup, TensorRef } from './wire.ts';

export interface GraphExecutionFilters {
  opType?: string;
  opName?: string;
  graphId?: string;
  onlyNonfinite?: boolean;
  /** Exact full device name (the `devices` route lists them). */
  device?: string;
  /** Exact host name. */
  host?: string;
  /** One tf.function call's traces only: its eager execution index. */
  call?: number;
  /** With a comparison on (#27): only the traces that differ from the baseline run. */
  divergentOnly?: boolean;
}

/** A comparison's tolerances as the user set them (#39): |changed − baseline| ≤ atol + rtol·|baseline| for every
 * float dtype; one left out is the server's per-dtype default. Every compare route takes the same. */
export interface CompareTolerances {
  atol?: number;
  rtol?: number;
}

/** One debug tensor: a graph execution trace (output: its slot, or null) or an execution's output; or, with
 * `capsule`, one array of a NaN capsule (#26: route `capsule_array`; source/index/output then unused). */
export interface TensorTarget {
  source: 'graph' | 'eager';
  index: number;
  output: number | null;
  capsule?: CapsuleArrayTarget;
}

/** One batch array or variable of a NaN capsule: the capsule's path (its card's), the file, the name; `step` for
 * the title. */
export interface CapsuleArrayTarget {
  path: string;
  group: CapsuleArrayGroup;
  name: string;
  step: number;
  /** A batch array opened on one sample (a row of the card's per-sample table): its index along the first axis. */
  sample?: number;
}

/** Some filter narrows the list (the list's positions then are not global indices). */
export const hasFilters = (f: GraphExecutionFilters): boolean =>
  !!(f.opType || f.opName || f.onlyNonfinite || f.device || f.host || f.call !== undefined || f.divergentOnly);

/** The tensor a wire `TensorRef` names. */
export const targetOf = (ref: TensorRef): TensorTarget => ({
  source: ref.source,
  index: ref.index,
  output: ref.source === 'graph' ? null : ref.output,
});

/** The tensor an alert is about. */
export const alertTarget = (a: Alert): TensorTarget =>
  a.source === 'graph_execution'
    ? { source: 'graph', index: a.source_index, output: null }
    : { source: 'eager', index: a.source_index, output: a.output_slot };

// Wire types (see ../wire.ts): The alert list: alerts, the rules a dump cannot judge, what mutes hid.
import type { DebugModeName } from './common.ts';
import type { StackFrame } from './source.ts';

// ---------------------------------------------------------------------------------------------------------------
// alerts — produced by `api/routes.py:alerts`
// ---------------------------------------------------------------------------------------------------------------

/**
 * InfNanAlert: a NaN/∞ (the index's alert list). The others are the alert rules (analysis/rules/config.py):
 * retracing, output shape/dtype change across steps, a batch size that alternates (a shape change in a rhythm:
 * train/eval batches), all-zero tensors, dead ReLUs, value explosion/vanishing.
 */
export type AlertType =
  | 'InfNanAlert'
  | 'retracing'
  | 'shape_change'
  | 'batch_alternates'
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

// Wire types (see ../wire.ts): NaN capsules (#26) under the logdir: the capsule cards.
import type { CapsuleLayerHistory } from './capsule_layers.ts';
import type { Num } from './common.ts';
import type { NonFinitePositions, TensorHistogram, TensorSlice, TensorStats } from './tensor_values.ts';

// ---------------------------------------------------------------------------------------------------------------
// capsules — produced by `api/routes/capsules.py:capsules` (analysis/capsule_summary.py)
// ---------------------------------------------------------------------------------------------------------------

/** Health counts of one array (the trigger, a weight). */
export interface CapsuleHealth {
  size: number;
  nan: number;
  pos_inf: number;
  neg_inf: number;
}

/** What triggered the capture: the loss, or the first non-finite gradient (named by its variable's path). */
export interface CapsuleTrigger {
  kind: 'loss' | 'gradient' | 'unknown';
  name: string;
  health: CapsuleHealth;
  /** The trigger in words, as `report` prints it. */
  text: string;
}

/** One sample (row along the first axis) of a batch array: its non-finite count, max |x| of its finite values. */
export interface CapsuleSample {
  array: string;
  sample: number;
  nonfinite: number;
  max_abs: number;
}

/** A model variable (or optimizer slot) of the capsule holding non-finite values. */
export interface CapsuleBadWeight extends CapsuleHealth {
  name: string;
  group: 'weights' | 'optimizer';
}

/** One batch array or variable of the capsule (what Tensor Values can open through `capsule_array`). */
export interface CapsuleArrayInfo {
  group: 'batch' | 'weights' | 'optimizer';
  name: string;
  dtype: string;
  shape: number[];
}

/** What the replay of a capsule found: the same step non-finite again, finite, non-finite only when compiled with
 * XLA as the run ran it (the un-compiled dump stayed finite), or no replay possible. */
export type CapsuleVerdict = 'reproduced' | 'not_reproduced' | 'reproduced_only_under_xla' | 'cannot_replay';

/** One capsule folder: damaged ones carry `error` and nothing else of the capture. */
export interface CapsuleInfo {
  /** The capsule's folder relative to the logdir. */
  path: string;
  status: 'ok' | 'damaged';
  error?: string;
  step?: number;
  epoch?: number | null;
  batch_index?: number | null;
  trigger?: CapsuleTrigger;
  /** The replay's verdict, null before any replay. */
  verdict?: CapsuleVerdict | null;
  /** The verdict in words, as `report` prints it. */
  verdict_text?: string;
  /** The command that replays this capsule (copyable). */
  replay_command?: string;
  /** The run holding the replay's dump, once replayed (open it for the root cause and the line). */
  replay_run?: string | null;
  /** Per sample of each batch array, the ones with non-finite values first, then by max |x| (at most 50). */
  samples?: CapsuleSample[];
  /** Batch samples in all (before the cap of `samples`). */
  samples_total?: number;
  /** Variables and optimizer slots holding non-finite values (none expected: the capture precedes the update). */
  bad_weights?: CapsuleBadWeight[];
  arrays?: CapsuleArrayInfo[];
  /** The loss of each sample at the trigger, top rows first (analysis/capsule_rows.py card_fields). */
  sample_loss?: CapsuleSampleLoss;
  /** Per-layer history: gradient norms over the last steps, the first out of band (analysis/capsule_layers.py). */
  layer_history?: CapsuleLayerHistory;
  /** When the capsule was captured: its manifest's `created`, in seconds since the epoch (the clock of a dump's
   * `wall_time`); null when the manifest has none. The dashboard opens on the capsules when one is newer than every
   * run's first NaN. */
  captured_time?: number | null;
}

/** One sample's loss at the trigger. */
export interface CapsuleLossRow {
  sample: number;
  loss: Num;
}

/** The per-sample loss at the trigger (capsule/forensics.py wrote it; older capsules: none, `text` says so). */
export interface CapsuleSampleLoss {
  /** e.g. "rows 17 and 40 carry 98 % of the loss (64 samples)", "row 5 is non-finite (NaN) of 8". */
  text: string;
  /** The top rows: non-finite first, then by loss (at most 8); a non-finite loss is "NaN" / "Infinity". */
  rows: CapsuleLossRow[];
  samples: number;
  /** The previous step's batch, its per-sample loss in one sentence (older capsules: "not recorded by ..."). */
  previous?: string;
}

/** Every capsule under the logdir, first captured first. */
export interface CapsulesResponse {
  logdir: string;
  capsules: CapsuleInfo[];
  /** Why no card could be read (a logdir behind a URL that cannot be listed: unreachable, denied), in words. */
  notice?: string;
}

// ---------------------------------------------------------------------------------------------------------------
// capsule_array — produced by `api/routes/capsules.py:array` (analysis/capsule_array.py)
// ---------------------------------------------------------------------------------------------------------------

/** Which array file of a capsule: the batch (inputs, targets, sample weights), the model's variables, the
 * optimizer's. */
export type CapsuleArrayGroup = 'batch' | 'weights' | 'optimizer';

/** One batch array or variable of a capsule as Tensor Values shows it: the same whole-array numbers and slice as
 * a dumped FULL_TENSOR value (`TensorResponse`), read from the capsule's .npz. */
export interface CapsuleArrayResponse {
  /** The capsule's folder relative to the logdir (its card's `path`). */
  capsule: string;
  /** The training step the capsule was captured at. */
  step: number;
  group: CapsuleArrayGroup;
  /** The batch array's flattened name ('x', 'y/0', ...) or the variable's path. */
  name: string;
  dtype: string;
  shape: number[];
  size: number;
  stats: TensorStats | null;
  histogram: TensorHistogram | null;
  nonfinite: NonFinitePositions | null;
  slice: TensorSlice | null;
}

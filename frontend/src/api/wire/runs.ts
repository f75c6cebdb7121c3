// Wire types (see ../wire.ts): The runs poll: runs, their counts and status, notices, the runs overview.
import type { DebugModeName } from './common.ts';

// ---------------------------------------------------------------------------------------------------------------
// runs — produced by `api/routes.py:runs`
// ---------------------------------------------------------------------------------------------------------------

/**
 * Every notice code the backend sends. Problems with the dump's files come from `index/run_status.py` and
 * `index/catalog.py` (unreadable folders, failed refresh passes); the explanations of an empty panel from
 * `index/run_status.py`, and `no_dump_found` from `index/catalog.py` and `plugin.py`.
 */
export type NoticeCode =
  // Problems
  | 'damaged_record'
  | 'refresh_failed'
  | 'unreadable_file'
  | 'missing_file'
  | 'partial_record'
  // Explanations
  | 'circular_buffer'
  | 'no_tensor_mode'
  | 'eager_only'
  | 'no_dump_found'
  | 'capsules'
  | 'scanning'
  | 'no_graph_executions'
  | 'no_executions'
  | 'still_indexing';

/** A problem or explanation shown to the user (status line, empty-panel reason). */
export interface Notice {
  code: NoticeCode;
  severity: 'error' | 'warning' | 'info';
  message: string;
  /** Path relative to the run's directory, when the notice is about one file. */
  file?: string;
  /** Byte offset in that file. */
  offset?: number;
}

export interface RunCounts {
  executions: number;
  graph_executions: number;
  graphs: number;
  ops: number;
  source_files: number;
  stack_frames: number;
  alerts: number;
  alerts_by_type: Record<string, number>;
}

export interface RunStatus {
  bytes_read: number;
  bytes_total: number;
  /** True once a refresh pass has read every file to its end (it turns false again when files grow). */
  done: boolean;
  /** Wall time of the last completed refresh pass, null before the first. */
  last_refresh: number | null;
  notices: Notice[];
}

export interface RunInfo {
  /** Directory relative to the logdir (for a dump directly in the logdir: the logdir's folder name, or '.' when a
   * sub-folder has that name), plus '#<run id prefix>' when one directory holds several run ids. Stable: use it as
   * the `run` parameter. */
  name: string;
  start_time: number | null;
  tf_version: string | null;
  /** Which framework wrote the run, from its metadata: 'jax' for dumps of `tensorboard_plugin_dbg.jax` (whose
   * tf_version reads `jax <version>`), else 'tensorflow'. Made by `index/run_index.py:framework_of`. */
  framework: Framework;
  tfdbg_run_id: string | null;
  hosts: string[];
  debug_modes: DebugModeName[];
  counts: RunCounts;
  status: RunStatus;
  /** Added by `api/routes.py:runs` from `analysis/run_verdict.py:summary` (cached values only, never computed). */
  summary: RunSummary;
}

export type Framework = 'tensorflow' | 'jax';

/** The first NaN/∞ of a run: its producing op and the line to fix (the forward op's for a NaN born in the backward
 * pass, the dataset's for data, else the producer's own user line). */
export interface FirstNan {
  op_name: string | null;
  op_type: string;
  /** Name of the producer's graph (the tf.function), null for eager ops or when unknown. */
  graph_name: string | null;
  wall_time: number;
  file: string | null;
  line: number | null;
}

/** One run's line in the runs overview. indexing: not fully read; analyzing: read, root cause not built yet. */
export interface RunSummary {
  status: 'indexing' | 'analyzing' | 'clean' | 'found' | 'unknown';
  first_nan: FirstNan | null;
  /** How many alert rules found something (default thresholds), once the rules were evaluated; absent before. */
  rule_findings?: number;
}

/** What reading a remote logdir (gs://, s3://, any fsspec URL) cost this process so far: storage.cost(). */
export interface RemoteCost {
  /** listing requests (the service answers 1,000 objects a page) */
  lists: number;
  /** ranged reads */
  gets: number;
  /** size lookups of objects no listing covered */
  heads: number;
  /** bytes the ranged reads fetched */
  bytes: number;
}

export interface RunsResponse {
  logdir: string;
  runs: RunInfo[];
  /** Logdir-level notices, e.g. 'no_dump_found' with where it looked. */
  notices: Notice[];
  /** Present once the process has read a remote logdir. */
  remote_cost?: RemoteCost;
}

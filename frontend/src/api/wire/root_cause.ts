// Wire types (see ../wire.ts): The root cause card.
import type { Alert } from './alerts.ts';
import type { TensorHealth } from './health.ts';
import type { StackFrame } from './source.ts';

// ---------------------------------------------------------------------------------------------------------------
// root_cause — produced by `api/routes.py:root_cause` (analysis in `analysis/root_cause.py`)
// ---------------------------------------------------------------------------------------------------------------

export interface RootCauseInput {
  /** Input slot of the producer op. */
  slot: number;
  op_name: string;
  output_slot: number;
  op_type: string | null;
  /** False when TF did not trace that tensor (e.g. a function-input Placeholder, a gradient graph). */
  traced: boolean;
  /** Its most recent health before the producer ran; null when not traced. */
  health: TensorHealth | null;
  /** Index of that trace in graph_executions; null when not traced. */
  graph_execution_index: number | null;
  /** The eager execution whose output it was (an eager input, or what the caller passed into a function input). */
  execution_index: number | null;
  /** Human sentence, e.g. "probs:0 — 1 zero among 1,000 elements" or "not traced by TensorFlow". */
  description: string;
  /** Non-finite as in earlier runs where its consumers absorbed it (not what broke this op). */
  expected?: boolean;
  /** Not recorded, but known not to matter (not a floating-point tensor) or followed to the caller's tensor. */
  linked?: boolean;
}

/** The forward op a gradient op differentiates (analysis/gradients.py forward_op): the line to fix. */
export interface RootCauseForward {
  op_name: string;
  op_type: string;
  user_frame: StackFrame | null;
  source_line: string | null;
  /** One sentence on why the gradient broke where the forward pass did not (the tf.where trap: the forward value
   * was masked, its derivative was not); absent when there is nothing to add. */
  why?: string;
}

/** The data carried the NaN (analysis/producer.py _data): which batch and, with FULL_TENSOR, where. */
export interface RootCauseData {
  /** 0-based: the iterator op's run that handed it out; null when no iterator output after it held the NaN. */
  batch: number | null;
  /**
   * The NaN was born inside a tf.data function (a map's division): the producer's line is the one to fix, and the
   * pipeline's line (source_op, user_frame) is context, the dataset it was made in. False: the data came in with it.
   */
  born_in_pipeline: boolean;
  /** Index tuples of the first non-finite elements; null when the mode records no values. */
  positions: number[][] | null;
  note: string;
  /** The pipeline's first dataset op (e.g. TensorSliceDataset) and the user's line that made it. */
  source_op: string | null;
  user_frame: StackFrame | null;
  source_line: string | null;
}

/** A contained non-finite source the analysis skipped (analysis/explain.py skipped). */
export interface RootCauseSkip {
  op_name: string;
  op_type: string;
  graph_execution_index: number;
  /** How many of its runs were contained before the root cause. */
  runs: number;
  user_frame: StackFrame | null;
  source_line: string | null;
  description: string;
}

export interface RootCauseProducer {
  alert: Alert;
  /** producer: its inputs were recorded finite; unknown: some input was not recorded (see its description). */
  role: 'producer' | 'unknown';
  /** 0-based: how many times this op (or eager op type) ran before. */
  run_number: number;
  op_name: string | null;
  op_type: string;
  graph_id: string | null;
  output_health: TensorHealth;
  inputs: RootCauseInput[];
  /** False when the inputs' health cannot be known (CURT_HEALTH, untraced inputs, eager inputs). */
  inputs_known: boolean;
  stack_frame_ids: string[];
  /** Innermost frame in user code (not TensorFlow, Keras, site-packages, the standard library). */
  user_frame: StackFrame | null;
  /** Text of the user frame's line, when the source file is in the dump. */
  source_line: string | null;
  /** Set when the producer is a gradient op: the forward op, whose line is the one to fix. */
  forward: RootCauseForward | null;
  /** Set when an input pipeline's op handed out the first non-finite tensor. */
  data: RootCauseData | null;
  /** e.g. "overflow of float16's range (its largest finite value is 65504)"; null otherwise. */
  overflow: string | null;
  /**
   * A NaN capsule's replay (analysis/capsule_inputs.py): its inputs are the captured batch, and this sentence says
   * what it held, e.g. "the NaN came with the batch: x[5, 3] (sample 5, batch 3 of epoch 1)" or "Log at
   * train.py:23 received x[5, 3] = -2.0 (batch 3 of epoch 1)". Absent outside a capsule's replay.
   */
  capsule_batch?: string;
  /**
   * Which loss an anonymous loss op is (analysis/loss_name.py), e.g. "the loss: `mse`, given to compile() at
   * train.py:16 — model.compile(...)". Absent when the producer is not Keras's compiled loss.
   */
  loss?: string;
  /**
   * The producer is a JAX op whose body the writer did not trace (analysis/loop_iterations.py): a while loop's output
   * holding the NaN while its traced iterations were finite ("the NaN appeared in iterations 101–150 of this while
   * loop, which are not traced (...)"), or a shard_map, whose body is not recorded. Absent otherwise.
   */
  untraced_body?: string;
  /** Name of `graph_id`'s graph (the tf.function), from `analysis/run_verdict.py`; null when unknown. */
  graph_name: string | null;
  /** Where it ran: the trace's device, or the execution's first output's (full name); null when not recorded. */
  device: string | null;
}

export interface RootCauseResponse {
  run: string;
  /** clean: no non-finite tensor; clean_so_far: none in what was read, but the run is not fully read yet
   * (`analysis/run_verdict.py:root_cause`); reading: the run is being read and the analysis has not seen the rows
   * the header counts yet; found: a producer was identified; unknown: non-finite seen, cause unknowable. */
  status: 'clean' | 'clean_so_far' | 'reading' | 'found' | 'unknown';
  /** One sentence for the user, including what cannot be known. */
  message: string;
  producer: RootCauseProducer | null;
  /** Contained non-finite sources passed over on the way to the producer. */
  skipped: RootCauseSkip[];
  /** A circular buffer dropped earlier records: the producer is the first non-finite tensor kept. */
  first_kept: boolean;
  /** Alert counts by role (producers include the unknowns; contained include the expected). */
  producers: number;
  propagators: number;
  contained: number;
  /** Producers hidden by the request's mutes that came before the one shown (or all of them when none is left). */
  muted: number;
  /** This run's section of the headless report, word for word (`analysis/report_text.py:run_section`): what the
   * card's "copy as text" copies. */
  report_text: string;
}

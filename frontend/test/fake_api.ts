/** A fake Api over an in-memory run for store tests: one graph op `Log` fed by `probs`, traces and an alert. */
import type { Api, HealthMapQuery } from '../src/api/client.ts';
import type { CapsuleArrayTarget, GraphExecutionFilters, TensorTarget } from '../src/api/requests.ts';
import { ApiError } from '../src/api/client.ts';
import type {
  Alert,
  CapsuleArrayResponse,
  GraphExecutionRow,
  LineOp,
  OpInfo,
  RunInfo,
  StackFrame,
  TensorInputsResponse,
  TensorResponse,
} from '../src/api/wire.ts';
import { Controller, type UrlIO } from '../src/controller/controller.ts';
import { Store } from '../src/store/store.ts';
import type { UrlState } from '../src/controller/url.ts';

/** The URL in memory: what the controller last wrote is what it reads; pushes make a history that `back()` pops
 * (and tells the listener, as the browser's popstate does). */
export function memUrl(
  initial: UrlState = { run: null, focus: null, alert: null },
): UrlIO & { value: UrlState; history: UrlState[] } {
  let listener: ((s: UrlState) => void) | null = null;
  const io = {
    value: initial,
    history: [] as UrlState[],
    read: () => io.value,
    write: (s: UrlState, push = false) => {
      if (push) io.history.push(io.value);
      io.value = s;
    },
    listen: (cb: (s: UrlState) => void) => {
      listener = cb;
    },
    back: () => {
      const prev = io.history.pop();
      if (!prev) return;
      io.value = prev;
      listener?.(prev);
    },
  };
  return io;
}

/** `firstNanWall`: wall time of the run's first NaN (its summary says found), null: clean when done. */
export function runInfo(
  name: string,
  graphExecutions: number,
  alerts: number,
  done = true,
  firstNanWall: number | null = alerts ? 1 : null,
): RunInfo {
  const firstNan =
    firstNanWall === null
      ? null
      : { op_name: 'Log', op_type: 'Log', graph_name: 'loss', wall_time: firstNanWall, file: '/u/train.py', line: 42 };
  return {
    name,
    start_time: 1,
    tf_version: '2.21.0',
    framework: 'tensorflow',
    tfdbg_run_id: 'r',
    hosts: ['h'],
    debug_modes: ['FULL_HEALTH'],
    counts: {
      executions: 3,
      graph_executions: graphExecutions,
      graphs: 1,
      ops: 2,
      source_files: 1,
      stack_frames: 2,
      alerts,
      alerts_by_type: { InfNanAlert: alerts },
    },
    status: { bytes_read: 10, bytes_total: 10, done, last_refresh: 1, notices: [] },
    summary: done
      ? { status: firstNan ? 'found' : 'clean', first_nan: firstNan, rule_findings: 0 }
      : { status: 'indexing', first_nan: null },
  };
}

export class FakeApi implements Api {
  calls: string[] = [];
  /** Milliseconds before the answer to a call (its `calls` entry): lets a test make answers arrive out of order. */
  delayMs: (call: string) => number = () => 0;
  runsList: RunInfo[] = [runInfo('a', 10, 1), runInfo('b', 5, 0)];
  /** Alerts of run 'a' (all on trace 7). */
  alertCount = 1;
  frames: StackFrame[] = [
    { id: 'f0', host: 'h', path: '/u/train.py', line: 10, function: '<module>', source_index: 0, is_user: true },
    { id: 'f1', host: 'h', path: '/u/train.py', line: 42, function: 'cross_entropy', source_index: 0, is_user: true },
    { id: 'f2', host: 'h', path: '/tf/ops.py', line: 99, function: 'log', source_index: 1, is_user: false },
  ];

  private row(i: number): GraphExecutionRow {
    const isLog = i % 2 === 1;
    return {
      index: i,
      wall_time: i,
      op_name: isLog ? 'Log' : 'probs',
      op_type: isLog ? 'Log' : 'Softmax',
      output_slot: 0,
      graph_id: 'g1',
      device_name: `/job:localhost/replica:0/task:0/device:CPU:${isLog ? 1 : 0}`,
      host: 'h',
      health: { mode: 'CONCISE_HEALTH', tensor_id: i, size: 4, neg_inf: i === 7 ? 1 : 0, pos_inf: 0, nan: 0 },
    };
  }

  alert(): Alert {
    return {
      index: 0,
      type: 'InfNanAlert',
      source: 'graph_execution',
      source_index: 7,
      wall_time: 7,
      op_name: 'Log',
      op_type: 'Log',
      graph_id: 'g1',
      output_slot: 0,
      neg_inf: 1,
      pos_inf: 0,
      nan: 0,
      size: 4,
      role: 'producer',
    };
  }

  async capsules() {
    this.calls.push('capsules');
    return { logdir: '/logdir', capsules: [] };
  }
  async capsuleSamples(capsule: string, array: string, begin: number, end: number) {
    this.calls.push(`capsule_samples ${capsule} ${array} ${begin} ${end}`);
    return { capsule, array, arrays: [array], total: 0, begin: 0, end: 0, marked: 0, marked_by: null, rows: [] };
  }
  /** Every capsule array: float32 [8, 5] with a NaN at [3, 2]; slices answer [2, 5] of 0..9 (NaN at 7). */
  async capsuleArray(c: CapsuleArrayTarget, slice?: string, bins?: number): Promise<CapsuleArrayResponse> {
    this.calls.push(`capsule_array ${c.path} ${c.group} ${c.name} ${slice ?? '-'} ${bins ?? ''}`);
    const stats = { of: 'values' as const, count: 40, nan: 1, neg_inf: 0, pos_inf: 0, neg: 0, zero: 3, pos: 36 };
    const values = Array.from({ length: 10 }, (_, i) => (i === 7 ? 'NaN' : i) as number | 'NaN');
    return {
      capsule: c.path,
      step: c.step,
      group: c.group,
      name: c.name,
      dtype: 'float32',
      shape: [8, 5],
      size: 40,
      stats: { ...stats, min: 0, max: 9, mean: 4, std: 2 },
      histogram: { edges: [0, 5, 10], counts: [20, 19], nan: 1, neg_inf: 0, pos_inf: 0 },
      nonfinite: { total: 1, positions: [[3, 2]], truncated: false, per_axis: [] },
      slice: slice === undefined ? null : { spec: slice, shape: [2, 5], values },
    };
  }

  async runs() {
    this.calls.push('runs');
    return { logdir: '/l', runs: this.runsList, notices: [] };
  }
  async alerts(run: string, begin: number, end: number, type?: string, mutes?: string) {
    this.calls.push(`alerts ${run} ${begin} ${end} ${type ?? ''}${mutes ? ' ' + mutes : ''}`);
    const n = run === 'a' ? this.alertCount : 0;
    const all = mutes ? [] : Array.from({ length: n }, (_, i) => ({ ...this.alert(), index: i }));
    return {
      run,
      begin,
      end,
      total: all.length,
      totals_by_type: { InfNanAlert: all.length },
      alerts: all.slice(begin, end),
      muted: { total: mutes ? n : 0, by_mute: mutes ? [n] : [] },
      needs: [],
      rules_pending: false,
    };
  }
  async healthMap(run: string, q: HealthMapQuery) {
    this.calls.push(`health_map ${run} ${q.begin} ${q.end} ${q.opName ?? ''}`);
    return {
      run,
      begin: q.begin,
      end: q.begin,
      total: 0,
      steps: 0,
      step_begin: 0,
      step_end: 0,
      bin: 1,
      columns: 0,
      rows: [],
    };
  }
  async timelineMarks(run: string, bins: number, mutes?: string) {
    this.calls.push(`timeline_marks ${run} ${bins}${mutes ? ' ' + mutes : ''}`);
    return { run, executions: 0, edges: [0], counts: [], first_alert: [], alerts: 0, after_last: 0 };
  }
  async executions(run: string, begin: number, end: number) {
    this.calls.push(`executions ${run} ${begin} ${end}`);
    return { run, begin, end, total: 0, executions: [] };
  }
  async execution(): Promise<never> {
    throw new ApiError('not_found', 'no execution', 404);
  }
  async graphExecutions(run: string, begin: number, end: number, f: GraphExecutionFilters = {}) {
    const inCallText = f.call === undefined ? '' : ` call ${f.call}`;
    const facets = `${f.device ? ' device=' + f.device : ''}${f.host ? ' host=' + f.host : ''}`;
    const nf = f.onlyNonfinite ? ' nonfinite' : '';
    this.calls.push(`graph_executions ${run} ${begin} ${end}${nf}${facets}${inCallText}`);
    const unfiltered = this.runsList.find((r) => r.name === run)!.counts.graph_executions;
    const all = Array.from({ length: unfiltered }, (_, i) => this.row(i));
    // every call ran traces 5..9 of the fake run (trace 7 is its NaN)
    const inCall = (r: GraphExecutionRow) => f.call === undefined || (r.index >= 5 && r.index < 10);
    const matching = all.filter(
      (r) =>
        (!f.onlyNonfinite || r.index === 7) &&
        (!f.opType || r.op_type === f.opType) &&
        (!f.device || r.device_name === f.device) &&
        (!f.host || r.host === f.host) &&
        inCall(r),
    );
    const bad = matching.findIndex((r) => r.index === 7);
    const call =
      f.call === undefined
        ? null
        : {
            index: f.call,
            op_type: '__inference_step_1',
            graph_id: 'g1',
            graph_name: 'step',
            traces: 5,
            first_nonfinite: bad < 0 ? null : { index: 7, position: bad },
          };
    const rows = matching.slice(begin, end);
    return { run, begin, end, total: matching.length, unfiltered_total: unfiltered, rows, call };
  }
  /** Run 'a': Log on CPU:1, probs on CPU:0 (rows alternate), all on host 'h'. */
  async devices(run: string) {
    this.calls.push(`devices ${run}`);
    const n = this.runsList.find((r) => r.name === run)!.counts.graph_executions;
    const on = (cpu: number, traces: number) => ({
      device_name: `/job:localhost/replica:0/task:0/device:CPU:${cpu}`,
      host: 'h',
      graph_executions: traces,
      executions: 1,
    });
    return { run, devices: [on(0, Math.ceil(n / 2)), on(1, Math.floor(n / 2))], hosts: ['h'] };
  }
  async graphExecution(run: string, index: number) {
    const call = `graph_execution ${index}`;
    this.calls.push(call);
    await new Promise((r) => setTimeout(r, this.delayMs(call)));
    return {
      ...this.row(index),
      tensor_debug_mode: 'CONCISE_HEALTH' as const,
      value: null,
      graph_name: 'train_step',
      graph_chain: ['g1'],
      call_index: index >= 5 && index < 10 ? 4 : null, // every call ran traces 5..9
    };
  }
  async graph(): Promise<never> {
    throw new ApiError('not_found', 'no', 404);
  }
  async op(run: string, graphId: string, opName: string, near?: number): Promise<OpInfo> {
    this.calls.push(`op ${opName} ${near ?? ''}`);
    const traced = opName === 'Log' ? [1, 3, 5, 7, 9] : opName === 'probs' ? [0, 2, 4, 6, 8] : [];
    return {
      run,
      graph_id: graphId,
      graph_chain: [{ graph_id: 'g1', name: 'train_step' }],
      op_name: opName,
      op_type: opName === 'Log' ? 'Log' : 'Placeholder',
      device_name: null,
      num_outputs: 1,
      output_tensor_ids: [1],
      stack_frame_ids: ['f0', 'f1', 'f2'],
      host: 'h',
      traces: { count: traced.length, indices: traced },
      inputs:
        opName === 'Log'
          ? [{ slot: 0, op_name: 'probs', output_slot: 0, op: null, traces: { count: 5, indices: [0, 2, 4, 6, 8] } }]
          : [],
      consumers: [],
    };
  }
  async sourceFiles(run: string) {
    return { run, files: [] };
  }
  /** Text of source file 0 (/u/train.py); null: `source_file` answers 404, as for a file the dump lacks. */
  sourceText: string[] | null = null;
  /** Ops of line 42 of file 0: `Log` (non-finite from trace 7, made there) and `probs` (via a call, untraced). */
  lineOpRows: LineOp[] = [
    {
      graph_id: 'g1',
      graph_name: 'train_step',
      op_name: 'Log',
      op_type: 'Log',
      direct: true,
      traced: true,
      nonfinite_traces: 1,
      first_nonfinite: 7,
    },
    {
      graph_id: 'g1',
      graph_name: 'train_step',
      op_name: 'probs',
      op_type: 'Placeholder',
      direct: false,
      traced: false,
      nonfinite_traces: 0,
      first_nonfinite: null,
    },
  ];
  async sourceFile(run: string, index: number) {
    this.calls.push(`source_file ${index}`);
    const lines = this.sourceText;
    if (lines === null || index !== 0) throw new ApiError('not_found', 'no', 404);
    const n = lines.length;
    return {
      run,
      index,
      host: 'h',
      path: '/u/train.py',
      line_count: n,
      begin_line: 1,
      end_line: n,
      lines,
      op_lines: [],
    };
  }
  async sourceLineCounts(run: string, index: number) {
    this.calls.push(`source_line_counts ${index}`);
    const rows = this.lineOpRows;
    const nonfinite = rows.filter((r) => r.first_nonfinite !== null).length;
    const direct = rows.filter((r) => r.direct).length;
    return { run, index, total_ops: rows.length, lines: [{ line: 42, ops: rows.length, direct, nonfinite }] };
  }
  async lineOps(run: string, index: number, line: number, begin: number, end: number) {
    this.calls.push(`line_ops ${index} ${line} ${begin} ${end}`);
    const rows = line === 42 && index === 0 ? this.lineOpRows : [];
    const page = rows.slice(begin, end);
    const nonfinite = rows.filter((r) => r.first_nonfinite !== null).length;
    const direct = rows.filter((r) => r.direct).length;
    return { run, index, line, total: rows.length, direct, nonfinite, begin, end: begin + page.length, rows: page };
  }
  async stackFrames(run: string, ids: string[]) {
    this.calls.push(`stack_frames ${ids.join(',')}`);
    return { run, frames: ids.map((id) => this.frames.find((f) => f.id === id)!) };
  }
  async neighborhood(run: string, graphId: string, opName: string, hops: number, near?: number) {
    this.calls.push(`graph_neighborhood ${graphId} ${opName} ${hops} ${near}`);
    const nodes = [
      { id: `${graphId}:${opName}`, kind: 'op' as const, graph_id: graphId, op_name: opName, op_type: 'Log', depth: 0 },
    ].map((n) => ({
      ...n,
      trace_index: near ?? null,
      health: null,
      role: null,
      device: null,
      on_path: true,
      more_up: 0,
      more_down: 0,
    }));
    return {
      run,
      graph_id: graphId,
      op_name: opName,
      hops,
      direction: 'both' as const,
      near: near ?? null,
      nodes,
      edges: [],
      truncated: false,
      notes: [],
    };
  }
  async rootCause(run: string, mutes?: string) {
    this.calls.push(`root_cause ${run}${mutes ? ' ' + mutes : ''}`);
    return {
      run,
      status: 'unknown' as const,
      message: 'not known',
      producer: null,
      skipped: [],
      first_kept: false,
      producers: 0,
      propagators: 0,
      contained: 0,
      muted: 0,
      report_text: `run ${run}: UNKNOWN — not known\n`,
    };
  }
  /** The FULL_TENSOR value of every trace: float32 [2, 3, 4] with a NaN at [1, 2, 3]; slices answer [3, 4]. */
  async tensor(run: string, t: TensorTarget, slice?: string, bins?: number): Promise<TensorResponse> {
    this.calls.push(`tensor ${t.source} ${t.index} ${slice ?? '-'} ${bins ?? ''}`);
    const ref = { ...t, output: t.output ?? 0, op_name: 'Log', op_type: 'Log', graph_id: 'g1', wall_time: 1 };
    const values = Array.from({ length: 12 }, (_, i) => (i === 11 ? 'NaN' : i) as number | 'NaN');
    return {
      run,
      tensor: { ...ref, tensor_debug_mode: 'FULL_TENSOR' },
      dtype: 'float32',
      shape: [2, 3, 4],
      size: 24,
      has_values: true,
      note: null,
      health: null,
      stats: {
        of: 'values',
        count: 24,
        nan: 1,
        neg_inf: 0,
        pos_inf: 0,
        neg: 0,
        zero: 2,
        pos: 21,
        min: 0,
        max: 10,
        mean: 5,
        std: 3,
      },
      histogram: { edges: [0, 5, 10], counts: [12, 11], nan: 1, neg_inf: 0, pos_inf: 0 },
      nonfinite: { total: 1, positions: [[1, 2, 3]], truncated: false, per_axis: [] },
      slice: slice === undefined ? null : { spec: slice, shape: [3, 4], values },
    };
  }
  async tensorInputs(run: string, t: TensorTarget): Promise<TensorInputsResponse> {
    this.calls.push(`tensor_inputs ${t.source} ${t.index}`);
    const ref = { source: 'graph' as const, index: 6, output: 0, op_name: 'probs', op_type: 'Softmax', graph_id: 'g1' };
    const input = { ...ref, wall_time: 6, tensor_debug_mode: 'FULL_TENSOR' as const };
    const tensor = {
      ...ref,
      source: t.source,
      index: t.index,
      wall_time: 7,
      tensor_debug_mode: 'FULL_TENSOR' as const,
    };
    return { run, tensor, inputs: [{ slot: 0, name: 'probs:0', tensor: input, description: 'probs:0 — finite' }] };
  }
}

/** A controller started on a FakeApi with its first answers asked for (its polling stopped): most store tests'
 * starting point. */
export async function startController(url = memUrl()) {
  const store = new Store();
  const api = new FakeApi();
  const ctl = new Controller(store, api, url);
  await ctl.start();
  ctl.stop();
  return { store, api, url, ctl };
}

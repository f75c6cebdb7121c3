/**
 * The typed API client: the only module that calls `fetch`.
 *
 * Routes are GET `/data/plugin/dbg/<route>`; the iframe document has `<base href="plugin/dbg/">`, so relative names
 * resolve there. Every method returns the wire type of its route or throws `ApiError` (from the backend's
 * `{"error": {...}}` body, or a network/parse failure) so panels can show one kind of error state.
 */
import type {
  AlertsResponse,
  CompareResponse,
  CompareRowsResponse,
  CompareTracesResponse,
  CompareValuesResponse,
  DevicesResponse,
  ErrorCode,
  ExecutionDetail,
  ExecutionsResponse,
  GraphExecutionDetail,
  GraphExecutionsResponse,
  GraphInfo,
  HealthMapResponse,
  LineOpsResponse,
  NeighborhoodResponse,
  OpInfo,
  RootCauseResponse,
  RunsResponse,
  CapsuleArrayResponse,
  CapsulesResponse,
  CapsuleSamplesResponse,
  SourceFileResponse,
  SourceFilesResponse,
  SourceLineCountsResponse,
  StackFramesResponse,
  TensorInputsResponse,
  TensorResponse,
  TimelineMarksResponse,
} from './wire.ts';
import type { CapsuleArrayTarget, CompareTolerances, GraphExecutionFilters, TensorTarget } from './requests.ts';

/** The server's error codes, plus the client's own for a request that got no usable answer. */
export type ClientErrorCode = ErrorCode | 'network' | 'bad_response' | `http_${number}`;

export class ApiError extends Error {
  constructor(
    readonly code: ClientErrorCode,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Rows per page the server answers at most (bigger pages are a 400 page_too_large). The server's own definition is
 * `PAGE_CAP` in tensorboard_plugin_dbg/api/params.py; this is the frontend's only copy. */
export const PAGE_CAP = 1000;
/** Stack frame ids per `stack_frames` request (the route caps the list; stay well below). */
export const FRAME_IDS_CAP = 200;

/** The `tensor.npy` download of a tensor (a link, not a fetch: the browser saves the file). */
export function tensorNpyUrl(run: string, t: TensorTarget): string {
  return routeUrl('tensor.npy', { run, source: t.source, index: t.index, output: t.output });
}

/** The `capsule_array.npy` download of a NaN capsule's batch array or variable (#26; the npz member's bytes). */
export function capsuleArrayNpyUrl(c: CapsuleArrayTarget): string {
  return routeUrl('capsule_array.npy', { capsule: c.path, group: c.group, name: c.name });
}

/** What the store needs from the backend; the HTTP client implements it and unit tests use a fake. */
export interface Api {
  runs(): Promise<RunsResponse>;
  /** The NaN capsules under the logdir (#26): the capsule cards. */
  capsules(): Promise<CapsulesResponse>;
  /** One batch array or variable of a capsule, as `tensor` answers for a dumped value (#26). */
  capsuleArray(c: CapsuleArrayTarget, slice?: string, bins?: number): Promise<CapsuleArrayResponse>;
  /** A page of one batch array's per-sample table (#36). */
  capsuleSamples(capsule: string, array: string, begin: number, end: number): Promise<CapsuleSamplesResponse>;
  /** `mutes`: the JSON the `mutes` parameter takes (store/mutes.ts mutesParam), or undefined for none. */
  alerts(run: string, begin: number, end: number, type?: string, mutes?: string): Promise<AlertsResponse>;
  executions(run: string, begin: number, end: number): Promise<ExecutionsResponse>;
  execution(run: string, index: number): Promise<ExecutionDetail>;
  graphExecutions(run: string, begin: number, end: number, f?: GraphExecutionFilters): Promise<GraphExecutionsResponse>;
  graphExecution(run: string, index: number): Promise<GraphExecutionDetail>;
  /** Each device x host of the run with its traces and eager executions (Graph Execution's facets). */
  devices(run: string): Promise<DevicesResponse>;
  graph(run: string, graphId: string): Promise<GraphInfo>;
  op(run: string, graphId: string, opName: string, near?: number): Promise<OpInfo>;
  neighborhood(
    run: string,
    graphId: string,
    opName: string,
    hops: number,
    near?: number,
  ): Promise<NeighborhoodResponse>;
  sourceFiles(run: string): Promise<SourceFilesResponse>;
  sourceFile(run: string, index: number): Promise<SourceFileResponse>;
  /** Per line of source file `index`, the graph ops created there (counts). */
  sourceLineCounts(run: string, index: number): Promise<SourceLineCountsResponse>;
  /** The graph ops line `line` of file `index` created, rows [begin, end). */
  lineOps(run: string, index: number, line: number, begin: number, end: number): Promise<LineOpsResponse>;
  stackFrames(run: string, ids: string[]): Promise<StackFramesResponse>;
  rootCause(run: string, mutes?: string): Promise<RootCauseResponse>;
  healthMap(run: string, q: HealthMapQuery): Promise<HealthMapResponse>;
  timelineMarks(run: string, bins: number, mutes?: string): Promise<TimelineMarksResponse>;
  /** `slice` absent: the summary only (stats, histogram, non-finite positions). */
  tensor(run: string, t: TensorTarget, slice?: string, bins?: number): Promise<TensorResponse>;
  tensorInputs(run: string, t: TensorTarget): Promise<TensorInputsResponse>;
  /** Run `run` (B) compared with run `base` (A): first divergence and differing tensors [begin, end) (#27), at the
   * tolerances `tol` (each compare method takes them: the same comparison for the card, rows, nodes and values). */
  compare?(run: string, base: string, begin: number, end: number, tol?: CompareTolerances): Promise<CompareResponse>;
  /** Graph Execution with a comparison on: B's traces [begin, end) under `f`, each with its difference from A. */
  compareRows?(
    run: string,
    base: string,
    begin: number,
    end: number,
    f?: GraphExecutionFilters,
    tol?: CompareTolerances,
  ): Promise<CompareRowsResponse>;
  /** The differences from A of B's graph traces `indices` (Graph Structure's drawn nodes). */
  compareTraces?(run: string, base: string, indices: number[], tol?: CompareTolerances): Promise<CompareTracesResponse>;
  /** Tensor `t` of run `run` (B), its aligned counterpart in run `base` (A) and A − B over `slice` (#27). */
  compareValues?(
    run: string,
    base: string,
    t: TensorTarget,
    slice?: string,
    tol?: CompareTolerances,
  ): Promise<CompareValuesResponse>;
}

/** One health map request: rows [begin, end) (or one op's), at most `columns` step bins. */
export interface HealthMapQuery {
  begin: number;
  end: number;
  columns: number;
  graphId?: string;
  opName?: string;
  /** Only ops whose name or type holds this text (case-insensitive). */
  opContains?: string;
}

type Params = Record<string, string | number | boolean | undefined | null>;

/** Builds `route?a=1&b=2`, leaving out undefined/null/empty values (the server treats empty as absent anyway). */
export function routeUrl(route: string, params: Params = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '' || v === false) continue;
    q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${route}?${s}` : route;
}

export type FetchFn = (url: string) => Promise<{ ok: boolean; status: number; text(): Promise<string> }>;

export class HttpApi implements Api {
  /** Requests in flight and their responses, so two panels asking for the same thing share one fetch. */
  private inflight = new Map<string, Promise<unknown>>();

  constructor(private readonly fetchFn: FetchFn = (u) => fetch(u, { credentials: 'same-origin' })) {}

  private async get<T>(route: string, params: Params = {}): Promise<T> {
    const url = routeUrl(route, params);
    const pending = this.inflight.get(url);
    if (pending) return pending as Promise<T>;
    const p = this.load<T>(url).finally(() => this.inflight.delete(url));
    this.inflight.set(url, p);
    return p;
  }

  private async load<T>(url: string): Promise<T> {
    let resp;
    try {
      resp = await this.fetchFn(url);
    } catch (e) {
      throw new ApiError('network', `cannot reach the server: ${String(e)}`, 0);
    }
    const text = await resp.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ApiError('bad_response', `the server sent non-JSON (HTTP ${resp.status})`, resp.status);
    }
    if (!resp.ok || (typeof body === 'object' && body !== null && 'error' in body)) {
      const err = (body as { error?: { code?: ErrorCode; message?: unknown } }).error ?? {};
      throw new ApiError(err.code ?? `http_${resp.status}`, String(err.message ?? `HTTP ${resp.status}`), resp.status);
    }
    return body as T;
  }

  runs() {
    return this.get<RunsResponse>('runs');
  }
  capsules() {
    return this.get<CapsulesResponse>('capsules');
  }
  capsuleSamples(capsule: string, array: string, begin: number, end: number) {
    return this.get<CapsuleSamplesResponse>('capsule_samples', { capsule, array, begin, end });
  }
  capsuleArray(c: CapsuleArrayTarget, slice?: string, bins?: number) {
    return this.get<CapsuleArrayResponse>('capsule_array', {
      capsule: c.path,
      group: c.group,
      name: c.name,
      slice,
      bins,
    });
  }
  alerts(run: string, begin: number, end: number, type?: string, mutes?: string) {
    return this.get<AlertsResponse>('alerts', { run, begin, end, type, mutes });
  }
  executions(run: string, begin: number, end: number) {
    return this.get<ExecutionsResponse>('executions', { run, begin, end });
  }
  execution(run: string, index: number) {
    return this.get<ExecutionDetail>('execution', { run, index });
  }
  graphExecutions(run: string, begin: number, end: number, f: GraphExecutionFilters = {}) {
    return this.get<GraphExecutionsResponse>('graph_executions', { run, begin, end, ...filterParams(f) });
  }
  devices(run: string) {
    return this.get<DevicesResponse>('devices', { run });
  }
  graphExecution(run: string, index: number) {
    return this.get<GraphExecutionDetail>('graph_execution', { run, index });
  }
  graph(run: string, graphId: string) {
    return this.get<GraphInfo>('graph', { run, graph_id: graphId });
  }
  op(run: string, graphId: string, opName: string, near?: number) {
    return this.get<OpInfo>('op', { run, graph_id: graphId, op_name: opName, near });
  }
  neighborhood(run: string, graphId: string, opName: string, hops: number, near?: number) {
    return this.get<NeighborhoodResponse>('graph_neighborhood', {
      run,
      graph_id: graphId,
      op_name: opName,
      hops,
      near,
    });
  }
  sourceFiles(run: string) {
    return this.get<SourceFilesResponse>('source_files', { run });
  }
  sourceFile(run: string, index: number) {
    return this.get<SourceFileResponse>('source_file', { run, index });
  }
  sourceLineCounts(run: string, index: number) {
    return this.get<SourceLineCountsResponse>('source_line_counts', { run, index });
  }
  lineOps(run: string, index: number, line: number, begin: number, end: number) {
    return this.get<LineOpsResponse>('line_ops', { run, index, line, begin, end });
  }
  async stackFrames(run: string, ids: string[]) {
    // Long stacks are split so no request exceeds the route's id cap; frames keep request order.
    if (ids.length === 0) return { run, frames: [] };
    const parts: Promise<StackFramesResponse>[] = [];
    for (let i = 0; i < ids.length; i += FRAME_IDS_CAP) {
      parts.push(
        this.get<StackFramesResponse>('stack_frames', { run, ids: ids.slice(i, i + FRAME_IDS_CAP).join(',') }),
      );
    }
    const got = await Promise.all(parts);
    return { run, frames: got.flatMap((g) => g.frames) };
  }
  rootCause(run: string, mutes?: string) {
    return this.get<RootCauseResponse>('root_cause', { run, mutes });
  }
  timelineMarks(run: string, bins: number, mutes?: string) {
    return this.get<TimelineMarksResponse>('timeline_marks', { run, bins, mutes });
  }
  healthMap(run: string, q: HealthMapQuery) {
    const { begin, end, columns } = q;
    return this.get<HealthMapResponse>('health_map', {
      run,
      begin,
      end,
      columns,
      graph_id: q.graphId,
      op_name: q.opName,
      op_contains: q.opContains || undefined,
    });
  }
  tensor(run: string, t: TensorTarget, slice?: string, bins?: number) {
    // `...` selects everything: an empty slice would be dropped from the URL (and means "no values")
    return this.get<TensorResponse>('tensor', { run, source: t.source, index: t.index, output: t.output, slice, bins });
  }
  tensorInputs(run: string, t: TensorTarget) {
    return this.get<TensorInputsResponse>('tensor_inputs', { run, source: t.source, index: t.index });
  }
  compare(run: string, base: string, begin: number, end: number, tol: CompareTolerances = {}) {
    return this.get<CompareResponse>('compare', { ...pairParams(run, base, tol), begin, end });
  }
  compareRows(
    run: string,
    base: string,
    begin: number,
    end: number,
    f: GraphExecutionFilters = {},
    tol: CompareTolerances = {},
  ) {
    const divergent_only = f.divergentOnly ? 'true' : undefined;
    return this.get<CompareRowsResponse>('compare_rows', {
      ...pairParams(run, base, tol),
      begin,
      end,
      ...filterParams(f),
      divergent_only,
    });
  }
  compareTraces(run: string, base: string, indices: number[], tol: CompareTolerances = {}) {
    const pair = pairParams(run, base, tol);
    return this.get<CompareTracesResponse>('compare_traces', { ...pair, indices: indices.join(',') });
  }
  compareValues(run: string, base: string, t: TensorTarget, slice?: string, tol: CompareTolerances = {}) {
    const { source, index, output } = t;
    const pair = pairParams(run, base, tol);
    return this.get<CompareValuesResponse>('compare_values', { ...pair, source, index, output, slice });
  }
}

/** The compared pair and its tolerances as every compare route takes them (run B, baseline A, atol, rtol). */
function pairParams(run: string, base: string, tol: CompareTolerances): Params {
  return { b: run, a: base, atol: tol.atol, rtol: tol.rtol };
}

/** Graph Execution's list filters as query parameters (`graph_executions` and `compare_rows` take the same). */
function filterParams(f: GraphExecutionFilters): Params {
  return {
    op_type: f.opType,
    op_name: f.opName,
    graph_id: f.graphId,
    only_nonfinite: f.onlyNonfinite ? 'true' : undefined,
    device: f.device,
    host: f.host,
    call: f.call,
  };
}

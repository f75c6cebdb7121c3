/**
 * The one store: which run, what is focused, filters, and everything the panels show (details, the lists' fetched
 * pages, the timeline's page, the source file).
 *
 * Only the controller (`src/controller/`: the controller and its loaders) writes it; panels read `store.state`,
 * subscribe, and call the controller's intents. This folder holds the store, its state types and pure functions over
 * them; it imports nothing from the controller. State is replaced immutably per `set`, so a subscriber can compare
 * slices by identity to skip work.
 */
import type {
  Alert,
  CallInfo,
  AlertsResponse,
  CompareResponse,
  CompareTracesResponse,
  CompareValuesResponse,
  DevicesResponse,
  ExecutionDetail,
  ExecutionsResponse,
  GraphExecutionDetail,
  GraphExecutionRow,
  HealthMapResponse,
  LineOpsResponse,
  OpInfo,
  NeighborhoodResponse,
  RootCauseResponse,
  RunInfo,
  RunsResponse,
  SourceFileRef,
  SourceFileResponse,
  SourceLineCountsResponse,
  StackFrame,
  TensorInputsResponse,
  TensorResponse,
  TimelineMarksResponse,
} from '../api/wire.ts';
import type { CompareTolerances, GraphExecutionFilters, TensorTarget } from '../api/requests.ts';
import { PagedRows } from './paged_rows.ts';
import type { Mute } from './mutes.ts';
import type { Plane, Window } from './tensor_math.ts';

/** What the user is looking at: one tensor trace in the graph execution list, or one eager execution. */
export type Focus = { kind: 'graph_execution'; index: number } | { kind: 'execution'; index: number };

export interface Loadable<T> {
  status: 'idle' | 'loading' | 'ready' | 'error';
  data: T | null;
  error: string | null;
}

export const idle = <T>(): Loadable<T> => ({ status: 'idle', data: null, error: null });
export const loading = <T>(prev?: Loadable<T>): Loadable<T> => ({
  status: 'loading',
  data: prev?.data ?? null,
  error: null,
});
export const ready = <T>(data: T): Loadable<T> => ({ status: 'ready', data, error: null });
export const failed = <T>(error: unknown): Loadable<T> => ({ status: 'error', data: null, error: errorText(error) });

export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

export interface SourceFocus {
  fileIndex: number;
  /** 1-based line to highlight and centre, or null to show the file from the top. */
  line: number | null;
}

/** Source Code's list of the ops one line created (the popover of a gutter marker), as far as fetched. */
export interface LineOpsView {
  fileIndex: number;
  line: number;
  /** Its pages so far merged into one answer (rows [0, end)); loading while a page is in flight. */
  list: Loadable<LineOpsResponse>;
}

/** The timeline's window of executions: which ones, and the page fetched for it. */
export interface TimelineView {
  begin: number;
  /** Executions in view: as many boxes as fit the panel's width at its zoom (the panel reports it). */
  size: number;
  page: Loadable<ExecutionsResponse>;
}

/** A request to scroll the Graph Execution list to a trace (seq makes repeated requests distinct). */
export interface ListScroll {
  /** The trace's global index. */
  index: number;
  /** Its position in the list as filtered now (equal to index when unfiltered). */
  position: number;
  seq: number;
}

export interface State {
  runs: Loadable<RunsResponse>;
  /** Name of the selected run (RunInfo.name). */
  run: string | null;
  focus: Focus | null;
  /** Global index of the alert that produced the focus (for next/previous), or null. */
  alertIndex: number | null;
  /** The alert type whose list is expanded in the Alerts panel. */
  alertType: string | null;
  focusDetail: Loadable<GraphExecutionDetail | ExecutionDetail>;
  /** The op shown in Graph Structure (the focused trace's op, or one navigated to). */
  op: Loadable<OpInfo>;
  /** Stack of the focused op / execution, outermost first as recorded. */
  frames: Loadable<StackFrame[]>;
  selectedFrameId: string | null;
  source: SourceFocus | null;
  geFilters: GraphExecutionFilters;
  geScroll: ListScroll | null;
  /** Graph execution indices of the focused op's inputs, tinted in the list. */
  inputRows: number[];
  /** The root cause's trace shown on arrival with no focus (focus_chain.ts previewRootCause): Graph Execution
   * marks it as focused and Graph Structure shows its op, until anything is focused. */
  previewTrace: number | null;
  /** Messages for the user that are not errors of one panel (e.g. "probs has no trace"). */
  hint: string | null;
  /** What the controller did to the Graph Execution list on its own (e.g. filters cleared to show a trace). */
  listNote: string | null;
  /** A focus before this one can be gone back to (Back, or the in-app back button). */
  canGoBack: boolean;
  /** The Alerts list: the run's alerts of `alertType`, as far as fetched. */
  alertRows: PagedRows<Alert>;
  /** The Graph Execution list: the run's traces under `geFilters`, as far as fetched. */
  geRows: PagedRows<GraphExecutionRow>;
  /** Op types seen in the fetched traces (the op type filter suggests them), at most OP_TYPES_CAP. */
  opTypes: string[];
  /** Where the run's ops ran (Graph Execution's device and host facets; controller/device_facets.ts). */
  devices: Loadable<DevicesResponse>;
  rootCause: Loadable<RootCauseResponse>;
  timeline: TimelineView;
  /** Where every visible NaN/∞ alert falls along the executions, binned (the timeline's minimap). */
  timelineMarks: TimelineMarksResponse | null;
  /** The tf.function call whose traces Graph Execution lists (its `call` filter), as the server described it. */
  openedCall: CallInfo | null;
  /** The run's source files, user code first. */
  sourceFiles: Loadable<SourceFileRef[]>;
  /** The file `source` points at. */
  sourceFile: Loadable<SourceFileResponse>;
  /** Per line of that file, the graph ops created there (Source Code's gutter markers). */
  sourceLineCounts: Loadable<SourceLineCountsResponse>;
  /** The marker list open in Source Code, or null. */
  lineOps: LineOpsView | null;
  /** Alerts the user muted (all runs of the logdir): sent with the alert and root-cause requests (store/mutes.ts). */
  mutes: Mute[];
  /** The alert totals per type after the mutes, what each mute hides, the rules the dump cannot judge. */
  alertSummary: Loadable<AlertsResponse>;
  /** The health map view (op x step) is open, and its page of rows. */
  healthMapOpen: boolean;
  /** The health map's op filter (a name or type fragment; '' for every op). */
  healthMapOps: string;
  healthMap: Loadable<HealthMapResponse>;
  /** The focused op's health across steps (Graph Structure's sparkline). */
  opHealth: Loadable<HealthMapResponse>;
  /** The Tensor Values view, when open (controller/tensor_loader.ts). */
  tensorView: TensorView | null;
  /** "Compare with…": the baseline run A the shown run is compared with, and the answer (controller/compare_loader.ts). */
  compareBase: string | null;
  compare: Loadable<CompareResponse>;
  /** The tolerances the user set on the card ({}: the server's per-dtype defaults); every compare request sends
   * them, so the card, Graph Execution's Δ column, the rings and Tensor Values measure alike (#39). */
  compareTolerances: CompareTolerances;
  /** What lies over the dashboard, oldest first: Escape closes the last (controller/overlay_stack.ts). */
  overlays: OverlayId[];
  /** The first divergence's values in both runs (FULL_TENSOR), for the card's A | B | A − B table. */
  compareValues: Loadable<{ a: TensorResponse; b: TensorResponse }>;
  /** The drawn neighbourhood's traces compared with run A: Graph Structure's colours (controller/compare_rows.ts). */
  compareNodes: Loadable<CompareTracesResponse>;
  /** While comparing, the Tensor Values view's tensor in both runs and A − B over its window
   * (controller/compare_values_loader.ts). */
  compareTensor: Loadable<CompareValuesResponse>;
  /** Graph Structure: the one-hop list or the drawn neighbourhood, and its hops. */
  graphView: GraphView;
  /** The drawn neighbourhood of the op in `op` (loaded only in the drawn mode). */
  neighborhood: Loadable<NeighborhoodResponse>;
}

/** A request to the grid to bring plane cell (row, col) to its centre (seq makes repeated requests distinct). */
export interface GridReveal {
  row: number;
  col: number;
  seq: number;
}

export interface InputView {
  name: string;
  description: string;
  target: TensorTarget | null;
  /** Its summary and its plane's heatmap sample (null: no recorded tensor). */
  values: Loadable<TensorResponse> | null;
}

export interface TensorView {
  target: TensorTarget;
  npyUrl: string;
  summary: Loadable<TensorResponse>;
  plane: Plane | null;
  window: Window;
  /** Values of `window` (its slice). */
  cells: Loadable<TensorResponse>;
  heat: Loadable<TensorResponse>;
  /** The full index of the focused element (a non-finite position clicked), or null. */
  focusCell: number[] | null;
  reveal: GridReveal | null;
  inputs: Loadable<TensorInputsResponse>;
  inputViews: InputView[];
}

export interface GraphView {
  mode: 'list' | 'drawn';
  hops: number;
}

/** What a list shows with no run: nothing, and nothing to fetch. */
export const noRows = <T>(): PagedRows<T> => PagedRows.empty<T>({ key: '', pageSize: 1 });

/** An overlay over the dashboard: the keys' help, Capsules, the compare card, Tensor Values. */
export type OverlayId = 'help' | 'capsules' | 'compare' | 'tensor';

/** Everything that belongs to one run's view: cleared when another run is selected. */

export function runViewState(): Omit<
  State,
  | 'runs'
  | 'run'
  | 'geScroll'
  | 'mutes'
  | 'healthMapOpen'
  | 'healthMapOps'
  | 'graphView'
  | 'canGoBack'
  | 'compareTolerances'
  | 'overlays'
> {
  return {
    alertSummary: idle(),
    healthMap: idle(),
    opHealth: idle(),
    alertRows: noRows(),
    geRows: noRows(),
    opTypes: [],
    devices: idle(),
    rootCause: idle(),
    timeline: { begin: 0, size: 40, page: idle() },
    timelineMarks: null,
    openedCall: null,
    sourceFiles: idle(),
    sourceFile: idle(),
    sourceLineCounts: idle(),
    lineOps: null,
    neighborhood: idle(),
    focus: null,
    alertIndex: null,
    alertType: null,
    focusDetail: idle(),
    op: idle(),
    frames: idle(),
    selectedFrameId: null,
    source: null,
    geFilters: {},
    inputRows: [],
    previewTrace: null,
    hint: null,
    listNote: null,
    tensorView: null,
    compareBase: null,
    compare: idle(),
    compareValues: idle(),
    compareNodes: idle(),
    compareTensor: idle(),
  };
}

export function initialState(): State {
  return {
    runs: idle(),
    run: null,
    geScroll: null,
    mutes: [],
    healthMapOpen: false,
    healthMapOps: '',
    graphView: { mode: 'list', hops: 2 },
    canGoBack: false,
    compareTolerances: {},
    overlays: [],
    ...runViewState(),
  };
}

export type Listener = (state: State, prev: State) => void;

export class Store {
  private _state: State;
  private listeners = new Set<Listener>();

  constructor(state: State = initialState()) {
    this._state = state;
  }

  get state(): State {
    return this._state;
  }

  set(patch: Partial<State>): void {
    const prev = this._state;
    this._state = { ...prev, ...patch };
    for (const l of [...this.listeners]) {
      try {
        l(this._state, prev);
      } catch (e) {
        // One broken subscriber must not stop the others from updating; surface it to the console.
        console.warn('dbg: subscriber failed', e);
      }
    }
  }

  subscribe(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** The selected run's info, or null. */
  runInfo(): RunInfo | null {
    const runs = this._state.runs.data?.runs ?? [];
    return runs.find((r) => r.name === this._state.run) ?? null;
  }
}

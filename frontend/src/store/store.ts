/**
 * The one store: which run, what is focused, filters, and the loaded detail every panel shows.
 *
 * Panels read `store.state` and subscribe; only the controller (`controller.ts`) writes the async parts. State is
 * replaced immutably per `set`, so a subscriber can compare slices by identity to skip work.
 */
import type {
  ExecutionDetail,
  GraphExecutionDetail,
  OpInfo,
  RunInfo,
  RunsResponse,
  StackFrame,
} from '../api/wire.ts';
import type { GraphExecutionFilters } from '../api/client.ts';

/** What the user is looking at: one tensor trace in the graph execution list, or one eager execution. */
export type Focus = { kind: 'graph_execution'; index: number } | { kind: 'execution'; index: number };

export interface Loadable<T> {
  status: 'idle' | 'loading' | 'ready' | 'error';
  data: T | null;
  error: string | null;
}

export const idle = <T>(): Loadable<T> => ({ status: 'idle', data: null, error: null });
export const loading = <T>(prev?: Loadable<T>): Loadable<T> => ({ status: 'loading', data: prev?.data ?? null, error: null });
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
  /** A request to scroll the Graph Execution list to an index (seq makes repeated requests distinct). */
  geScroll: { index: number; seq: number } | null;
  /** Graph execution indices of the focused op's inputs, tinted in the list. */
  inputRows: number[];
  /** Messages for the user that are not errors of one panel (e.g. "probs has no trace"). */
  hint: string | null;
}

/** Everything that belongs to one run's view: cleared when another run is selected. */
export function runViewState(): Omit<State, 'runs' | 'run' | 'geScroll'> {
  return {
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
    hint: null,
  };
}

export function initialState(): State {
  return { runs: idle(), run: null, geScroll: null, ...runViewState() };
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

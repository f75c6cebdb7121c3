/**
 * The "focus everywhere" chain, part of the controller: trace → op → stack → innermost user frame → source line, in
 * one place, so every entry point (alert click, row click, next/previous alert, the root-cause card, graph
 * navigation, an opened call, URL restore) behaves the same. Each focus is a history entry (focus_history.ts) and is
 * written to the URL; a newer focus makes the steps of an older one still in flight drop their results.
 *
 * The controller exposes these as its own intents (`ctl.focusAlert`, …); the loaders it owns do the rest of a
 * focus's follow-up (Source Code's file, the timeline's window, the Graph Execution list's data set).
 */
import type { Api } from '../api/client.ts';
import { hasFilters, type GraphExecutionFilters } from '../api/requests.ts';
import type { Alert, RootCauseProducer, StackFrame } from '../api/wire.ts';
import { fixFrame, innermostUserFrame, inputRowsOf, nearestIndex } from '../store/focus_math.ts';
import {
  failed,
  idle,
  loading,
  ready,
  errorText,
  type Focus,
  type ListScroll,
  type State,
  type Store,
} from '../store/store.ts';
import type { FocusHistory } from './focus_history.ts';
import type { GraphLoader } from './graph_loader.ts';
import type { ListsLoader } from './lists_loader.ts';
import type { RulesIntents } from './rules_intents.ts';
import type { SourceLoader } from './source_loader.ts';
import type { TimelineLoader } from './timeline_loader.ts';
import { attempt, Latest } from './latest.ts';

/** The controller's helpers a focus moves, and how it writes the URL (`push`: a new history entry). */
export interface FocusParts {
  lists: ListsLoader;
  sources: SourceLoader;
  timeline: TimelineLoader;
  graph: GraphLoader;
  rules: RulesIntents;
  history: FocusHistory;
  saveUrl(push: boolean): void;
}

export class FocusChain {
  /** Each focus change is a new request; an async step of a stale one drops its result. */
  private readonly focusLatest = new Latest();
  private scrollSeq = 0;
  private stepping: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly api: Api,
    private readonly parts: FocusParts,
  ) {}

  /** Another run is shown: the steps of the focus in flight drop their results. */
  dropPending(): void {
    this.focusLatest.drop();
  }

  /** The root-cause card's click: its alert, then the line to fix (a gradient's forward op, the data's source). */
  async focusRootCause(p: RootCauseProducer): Promise<void> {
    await this.focusAlert(p.alert);
    const fix = fixFrame(p);
    if (fix && fix !== p.user_frame && fix.path !== null && this.store.state.alertIndex === p.alert.index)
      this.parts.sources.show({ fileIndex: fix.source_index, line: fix.line }, { selectedFrameId: null });
  }

  /** With nothing focused: Source Code and Stack Trace show the root cause's line and creation stack (a preview:
   * no focus, no list moved, no history entry), so they are not empty until a click. Dropped the moment anything
   * is focused. */
  async previewRootCause(p: RootCauseProducer): Promise<void> {
    const run = this.store.state.run;
    const idle = () => this.store.state.focus === null && run === this.store.state.run;
    if (run === null || !idle()) return;
    try {
      await this.loadStack(run, p.stack_frame_ids, idle);
      const fix = fixFrame(p);
      if (idle() && fix && fix !== p.user_frame && fix.path !== null)
        this.parts.sources.show({ fileIndex: fix.source_index, line: fix.line }, { selectedFrameId: null });
      if (p.alert.source === 'graph_execution') await this.previewTrace(run, p.alert.source_index, idle);
    } catch {
      // a preview only: the panels keep their "select an alert" text
    }
  }

  /** The preview's trace in Graph Execution (in view, marked) and its op in Graph Structure (#40 item 10): the
   * landing is on the root cause in every panel, still without a focus (keys and n / p start from the top). */
  private async previewTrace(run: string, index: number, idle: () => boolean): Promise<void> {
    this.store.set({ previewTrace: index });
    const detail = await this.api.graphExecution(run, index);
    if (!idle()) return;
    if (detail.call_index !== null) this.parts.timeline.reveal(detail.call_index);
    const op = await this.api.op(run, detail.graph_id, detail.op_name, index);
    if (idle()) this.store.set({ op: ready(op), inputRows: inputRowsOf(op, index) });
  }

  focusAlert(alert: Alert): Promise<void> {
    if (alert.source === 'execution') return this.focusExecution(alert.source_index, alert.index);
    return this.focusGraphExecution(alert.source_index, alert.index);
  }

  /** Next (dir 1) or previous (-1) alert in wall-time order, from the focused one (keys n / p, the arrows). Steps
   * run one after another: `n` then `p` pressed fast must start `p` from where `n` went. */
  stepAlert(dir: number): Promise<void> {
    this.stepping = this.stepping.then(() => this.stepAlertNow(dir)).catch(() => undefined);
    return this.stepping;
  }

  private async stepAlertNow(dir: number): Promise<void> {
    const run = this.store.state.run;
    const count = this.store.runInfo()?.counts.alerts ?? 0;
    if (run === null || count === 0) return;
    const cur = this.store.state.alertIndex;
    const next = cur === null ? (dir > 0 ? 0 : count - 1) : Math.min(Math.max(cur + dir, 0), count - 1);
    if (next === cur) return;
    const page = await this.api.alerts(run, next, next + 1);
    const alert = page.alerts[0];
    if (alert && this.store.state.run === run) await this.focusAlert(alert);
  }

  /** `position`: the trace's place in the filtered Graph Execution list, when the caller knows it. */
  private beginFocus(focus: Focus, alertIndex: number | null, keepFilters = false, position?: number): () => boolean {
    const live = this.focusLatest.beginForRun(this.store);
    const patch: Partial<State> = {
      focus,
      previewTrace: null,
      alertIndex,
      focusDetail: loading(),
      frames: loading(),
      selectedFrameId: null,
      hint: null,
    };
    if (focus.kind === 'graph_execution') Object.assign(patch, this.scrollPatch(focus.index, keepFilters, position));
    const push = this.parts.history.pushFor(this.store.state.focus, focus);
    this.store.set(patch);
    this.parts.saveUrl(push);
    return live;
  }

  /**
   * Brings the Graph Execution list to trace `index`. A filtered list's positions are not global indices: the row is
   * looked up among the fetched pages; when it is not there (it may not match the filters), the filters are dropped
   * so the trace can be shown at all (`keepFilters`: they stay, and the list stays where it is).
   */
  private scrollPatch(index: number, keepFilters = false, known?: number): Partial<State> {
    const s = this.store.state;
    const seq = ++this.scrollSeq;
    if (!hasFilters(s.geFilters)) return { geScroll: { index, position: index, seq } };
    const position = known ?? s.geRows.positionOf((row) => row.index === index);
    if (position !== null) return { geScroll: { index, position, seq } };
    if (keepFilters) return {};
    const geScroll: ListScroll = { index, position: index, seq };
    // Never silently: the list says its filters were cleared and why.
    const listNote = `Filters cleared to show trace #${index}: it does not match them.`;
    return { geScroll, geFilters: {}, geRows: this.parts.lists.openTraces(s.run, {}), listNote, openedCall: null };
  }

  /** Focuses one graph execution trace: its row, its op, the op's creation stack and the user's source line. */
  async focusGraphExecution(
    index: number,
    alertIndex: number | null = null,
    keepFilters = false,
    position?: number,
  ): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const live = this.beginFocus({ kind: 'graph_execution', index }, alertIndex, keepFilters, position);
    this.store.set({ op: loading(this.store.state.op) });
    await attempt(
      async () => {
        const detail = await this.api.graphExecution(run, index);
        if (!live()) return;
        this.store.set({ focusDetail: ready(detail) });
        if (detail.call_index !== null) this.parts.timeline.reveal(detail.call_index); // the call that ran it
        const op = await this.api.op(run, detail.graph_id, detail.op_name, index);
        if (!live()) return;
        this.store.set({ op: ready(op), inputRows: inputRowsOf(op, index) });
        this.parts.rules.opShown(run, op.graph_id, op.op_name);
        await this.loadStack(run, op.stack_frame_ids, live);
      },
      live,
      (e) => this.failLoading(e),
    );
  }

  /** Focuses one eager execution (a timeline box): its detail and its stack; Graph Structure shows its graph. */
  async focusExecution(index: number, alertIndex: number | null = null): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const live = this.beginFocus({ kind: 'execution', index }, alertIndex);
    this.store.set({ op: idle(), inputRows: [] });
    this.parts.timeline.reveal(index);
    await attempt(
      async () => {
        const detail = await this.api.execution(run, index);
        if (!live()) return;
        this.store.set({ focusDetail: ready(detail) });
        await this.loadStack(run, detail.stack_frame_ids, live);
      },
      live,
      (e) => this.failLoading(e),
    );
  }

  /** The focus chain failed at some step: the parts still loading show the error, the parts loaded stay. */
  private failLoading(e: unknown): void {
    const { focusDetail, op, frames } = this.store.state;
    this.store.set({
      focusDetail: focusDetail.status === 'loading' ? failed(e) : focusDetail,
      op: op.status === 'loading' ? failed(e) : op,
      frames: frames.status === 'loading' ? failed(e) : frames,
    });
  }

  private async loadStack(run: string, ids: string[], live: () => boolean): Promise<void> {
    this.store.set({ frames: loading() });
    const resp = await this.api.stackFrames(run, ids);
    if (!live()) return;
    const frame = innermostUserFrame(resp.frames);
    const source =
      frame && frame.path !== null ? { fileIndex: frame.source_index, line: frame.line } : this.store.state.source;
    this.parts.sources.show(source, { frames: ready(resp.frames), selectedFrameId: frame?.id ?? null });
  }

  /**
   * Graph Structure navigation: show another op and move the Graph Execution list to its trace nearest the current
   * focus. Says plainly when the op has no trace instead of selecting nothing.
   */
  async navigateToOp(graphId: string, opName: string): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const near = this.store.state.focus?.kind === 'graph_execution' ? this.store.state.focus.index : null;
    const live = this.focusLatest.begin();
    this.store.set({ op: loading(this.store.state.op), hint: null });
    await attempt(
      async () => {
        const op = await this.api.op(run, graphId, opName, near ?? undefined);
        if (!live()) return;
        const idx = nearestIndex(op.traces.indices, near);
        if (idx === null) {
          const why =
            this.store.runInfo()?.framework === 'jax'
              ? "the JAX writer did not record it (e.g. a jitted function's argument or constant, a non-floating output)"
              : 'TensorFlow did not instrument it (e.g. a function-input placeholder or a gradient op)';
          this.store.set({ op: ready(op), inputRows: [], hint: `${opName} has no trace: ${why}.` });
          await this.loadStack(run, op.stack_frame_ids, live);
          return;
        }
        await this.focusGraphExecution(idx, null);
      },
      live,
      (e) => this.store.set({ op: failed(e) }),
    );
  }

  selectFrame(frame: StackFrame): void {
    const source = frame.path !== null ? { fileIndex: frame.source_index, line: frame.line } : this.store.state.source;
    this.parts.sources.show(source, { selectedFrameId: frame.id });
  }

  /**
   * Opens one tf.function call (a timeline box): Graph Execution lists just its traces, the first NaN/∞ among them
   * (else the first) is focused, and Graph Structure draws the graph around it.
   */
  async openCall(index: number): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const filters: GraphExecutionFilters = { ...this.store.state.geFilters, call: index };
    try {
      const first = await this.api.graphExecutions(run, 0, 1, filters);
      if (run !== this.store.state.run) return;
      const geRows = this.parts.lists.openTraces(run, filters);
      this.store.set({ geFilters: filters, geRows, listNote: null, openedCall: first.call });
      this.parts.graph.setView({ mode: 'drawn' });
      const row = first.call?.first_nonfinite ?? (first.rows[0] ? { index: first.rows[0].index, position: 0 } : null);
      if (row) await this.focusGraphExecution(row.index, null, false, row.position);
    } catch (e) {
      this.store.set({ listNote: `Could not open call #${index}: ${errorText(e)}` });
    }
  }
}

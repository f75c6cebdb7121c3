/**
 * The controller: the only module that talks to the API client, and the only writer of the store. Panels call its
 * intents (select, focus, filter, page, scroll) and render what the store then holds.
 *
 * One place runs the "focus everywhere" chain (trace → op → stack → innermost user frame → source line), so every
 * entry point (alert click, row click, root-cause card, graph navigation, URL restore) behaves the same. The data of
 * the lists, the timeline and Source Code is fetched by helpers it owns (lists_loader.ts, timeline_loader.ts,
 * source_loader.ts); what a live run's growth changes is decided here, when the runs poll answers. The Tensor Values
 * view's intents are `ctl.tensors` (tensor_loader.ts), the mutes' and health map's `ctl.rules` (rules_intents.ts),
 * Source Code's marker list's `ctl.lineOps` (line_ops_loader.ts).
 */
import type { Api, GraphExecutionFilters } from '../api/client.ts';
import type { Alert, RootCauseProducer, RunInfo, StackFrame } from '../api/wire.ts';
import { isStandingReadProblem } from '../api/notice_codes.ts';
import {
  Store,
  failed,
  idle,
  loading,
  ready,
  errorText,
  runViewState,
  type Focus,
  type GraphView,
  type ListScroll,
  type State,
} from './store.ts';
import { browserUrl, type UrlIO, type UrlState } from './url.ts';
import { fixFrame, innermostUserFrame, inputRowsOf, nearestIndex } from './focus_math.ts';
import { ListsLoader, hasFilters } from './lists_loader.ts';
import { TimelineLoader } from './timeline_loader.ts';
import { SourceLoader } from './source_loader.ts';
import { LineOpsLoader } from './line_ops_loader.ts';
import { TensorLoader } from './tensor_loader.ts';
import { GraphLoader } from './graph_loader.ts';
import { betterDefault, choiceMayChange, defaultRun } from './run_choice.ts';
import { FocusHistory } from './focus_history.ts';
import { RulesIntents } from './rules_intents.ts';
import { DeviceFacets } from './device_facets.ts';
import { mutesParam } from './mutes.ts';

export { innermostUserFrame, inputRowsOf, nearestIndex };

export type { UrlIO };

/** The alert type the Alerts panel opens for a run: the first with alerts, so the first alert is one click away. */
function firstAlertType(info: RunInfo | null): string | null {
  const byType = info?.counts.alerts_by_type ?? {};
  return Object.keys(byType).find((t) => (byType[t] ?? 0) > 0) ?? null;
}

/** The device and host facets of filters (or of a URL state), without empty ones. */
function facetsOf(f: { device?: string; host?: string }): { device?: string; host?: string } {
  return { ...(f.device ? { device: f.device } : {}), ...(f.host ? { host: f.host } : {}) };
}

export class Controller {
  /** Bumped by each focus change; an async step whose token is stale drops its result. */
  private focusSeq = 0;
  private scrollSeq = 0;
  private rootCauseSeq = 0;
  private pollTimer: ReturnType<typeof setTimeout> | null = null;
  private pollDelay = 1000;
  private pendingUrl: UrlState | null = null;
  /** The run shown was the default (run_choice.ts), not the user's nor the URL's: a later poll may correct it. */
  private pickedByDefault = false;
  private stepping: Promise<void> = Promise.resolve();
  private stopped = false;
  /** True once the dashboard's first paint is on screen: the data not needed for it is fetched from then on. */
  private firstPaintOver = false;
  private readonly lists: ListsLoader;
  /** The timeline's window: paging, zoom, a minimap click or dragged range, the panel's width. */
  readonly timeline: TimelineLoader;
  private readonly sources: SourceLoader;
  private readonly history: FocusHistory;
  /** The Tensor Values view's intents (open, axes, fixed indices, cells in view, focus a position, close). */
  readonly tensors: TensorLoader;
  private readonly graph: GraphLoader;
  /** Mutes, the rules' alert summary, the health map (#18). */
  readonly rules: RulesIntents;
  private readonly deviceFacets: DeviceFacets;
  /** Source Code's marker list: the ops a line created; focusing one (#17). */
  readonly lineOps: LineOpsLoader;

  constructor(
    readonly store: Store,
    private readonly api: Api,
    private readonly url: UrlIO = browserUrl,
  ) {
    this.lists = new ListsLoader(store, api);
    this.timeline = new TimelineLoader(store, api);
    this.sources = new SourceLoader(store, api);
    this.history = new FocusHistory(store);
    url.listen((s) => void this.restoreFromUrl(s));
    this.tensors = new TensorLoader(store, api);
    this.graph = new GraphLoader(store, api);
    this.deviceFacets = new DeviceFacets(store, api);
    this.lineOps = new LineOpsLoader(store, api, {
      focusTrace: (index) => this.focusGraphExecution(index),
      navigateToOp: (graphId, opName) => this.navigateToOp(graphId, opName),
    });
    // the drawn neighbourhood follows the op shown, however it came to be shown (a focus, a navigation)
    store.subscribe((s, prev) => {
      if (s.op !== prev.op && s.op.status === 'ready') this.graph.refresh();
    });
    this.rules = new RulesIntents(store, api, {
      saveUrl: () => this.saveUrl(),
      reopenAlerts: () => {
        this.setAlertType(this.store.state.alertType);
        if (this.firstPaintOver) void this.timeline.loadMarks(); // the mutes changed what the minimap marks
      },
      loadRootCause: () => void this.loadRootCause(),
    });
  }

  /** First load: runs, then the run and focus from the URL (if still valid). The runs request leaves at once, so a
   * caller that builds the page afterwards does not delay it. */
  async start(): Promise<void> {
    this.pendingUrl = this.url.read();
    await this.refreshRuns();
    this.schedulePoll();
  }

  stop(): void {
    this.stopped = true;
    if (this.pollTimer !== null) clearTimeout(this.pollTimer);
  }

  /**
   * The first paint is on screen: fetch what it did not need (the minimap's alert marks, about 300 KB at 1 M traces,
   * and the source file list), so it neither delayed the first pages on the server nor competed with their drawing.
   */
  firstPaintDone(): void {
    if (this.firstPaintOver) return;
    this.firstPaintOver = true;
    this.loadAfterFirstPaint();
  }

  private loadAfterFirstPaint(): void {
    if (!this.firstPaintOver) return;
    void this.timeline.loadMarks();
    void this.sources.loadFiles();
  }

  private async refreshRuns(): Promise<boolean> {
    const s = this.store.state;
    if (!s.runs.data) this.store.set({ runs: loading(s.runs) });
    let changed = false;
    try {
      const resp = await this.api.runs();
      const before = this.store.state;
      this.store.set({ runs: ready(resp) });
      this.rules.loadMutes(resp.logdir, this.pendingUrl?.mutes);
      const names = resp.runs.map((r) => r.name);
      const run = this.store.state.run;
      if (run === null || !names.includes(run)) {
        this.selectRunFromUrl(names);
        changed = true;
      } else if (this.pickedByDefault && betterDefault(this.store.state) !== null) {
        this.selectRun(betterDefault(this.store.state), null, false);
        changed = true;
      } else changed = this.followGrowth(before);
      if (!choiceMayChange(resp.runs)) this.pickedByDefault = false;
      this.pendingUrl = null;
    } catch (e) {
      // Keep the last good runs on a failed poll: a transient error must not blank the dashboard.
      if (!this.store.state.runs.data) this.store.set({ runs: failed(e) });
      else this.store.set({ runs: { ...this.store.state.runs, error: errorText(e) } });
    }
    return changed;
  }

  private selectRunFromUrl(names: string[]): void {
    const wanted = this.pendingUrl?.run;
    const fallback = defaultRun(this.store.state.runs.data?.runs ?? []);
    const run = wanted && names.includes(wanted) ? wanted : fallback;
    this.pickedByDefault = run === fallback && !(wanted && names.includes(wanted));
    // With nothing in the URL, the default run is what a reload picks anyway: writing it would only cost the first
    // paint a history update in TensorBoard's page too (~20 ms of its change detection, measured).
    const p = this.pendingUrl;
    const urlEmpty = !p || (p.run === null && p.focus === null && p.alert === null);
    if (run !== this.store.state.run) this.selectRun(run, this.pendingUrl, !(urlEmpty && run === fallback));
  }

  /** The user picked a run (the picker, the runs overview): it stays, whatever the default becomes. */
  chooseRun(run: string): void {
    this.pickedByDefault = false;
    if (run !== this.store.state.run) this.selectRun(run);
  }

  /**
   * The selected run's counts after a poll, against `before`: what grew is fetched again in place (scroll positions,
   * selection and focus stay). Returns whether anything changed (the poller then stays at its fastest).
   */
  private followGrowth(before: State): boolean {
    const was = before.runs.data?.runs.find((r) => r.name === before.run) ?? null;
    const now = this.store.runInfo();
    if (!was || !now) return false;
    const c0 = was.counts;
    const c1 = now.counts;
    if (c1.graph_executions !== c0.graph_executions) this.lists.traces.invalidate();
    const readNow = now.status.done && !was.status.done;
    if (c1.graph_executions !== c0.graph_executions || c1.executions !== c0.executions || readNow)
      this.deviceFacets.grew(readNow);
    if (c1.executions !== c0.executions) this.timeline.grew(before);
    if (c1.source_files !== c0.source_files && this.firstPaintOver) void this.sources.loadFiles();
    if (c1.ops !== c0.ops || c1.alerts !== c0.alerts) this.sources.opsGrew();
    // The root cause is asked again when alerts appear, and once when the run is read to its end: a run that had
    // no record yet said "unknown" and, with no alert ever, would keep saying it (not on every batch of traces:
    // each new index version is a new whole-run analysis on the server).
    if (now.status.done && !was.status.done && c1.alerts === c0.alerts) void this.loadRootCause();
    if (c1.alerts !== c0.alerts || (now.status.done && !was.status.done)) this.rules.grew();
    if (c1.alerts !== c0.alerts) {
      void this.loadRootCause();
      if (this.firstPaintOver) void this.timeline.loadMarks();
      if (this.store.state.alertType === null) this.setAlertType(firstAlertType(now));
      else this.lists.alerts.invalidate();
    }
    return JSON.stringify(c0) + was.status.done !== JSON.stringify(c1) + now.status.done;
  }

  /** Polls `runs` every second while the run is still being written or indexed, backing off to 30 s when idle (4 s
   * while a read problem stands). */
  private schedulePoll(): void {
    if (this.stopped) return;
    this.pollTimer = setTimeout(async () => {
      const changed = await this.refreshRuns();
      const info = this.store.runInfo();
      const busy = !info || !info.status.done;
      // A file the backend retries on every pass (unreadable, missing, failed) may be fixed any moment: the user
      // who fixes it expects the dashboard to follow within seconds, not after the 30 s idle back-off.
      const retrying = info?.status.notices.some(isStandingReadProblem) ?? false;
      this.pollDelay = changed || busy ? 1000 : Math.min(this.pollDelay * 2, retrying ? 4000 : 30000);
      this.schedulePoll();
    }, this.pollDelay);
  }

  /** Wakes the poller now (e.g. the tab became visible again). */
  pollSoon(): void {
    this.pollDelay = 1000;
    if (this.pollTimer !== null) clearTimeout(this.pollTimer);
    this.schedulePoll();
  }

  /** Shows `run` (null: none): every run-scoped view starts over; `restore` (from the URL) brings back its focus. */
  selectRun(run: string | null, restore: UrlState | null = null, save = true): void {
    this.focusSeq++;
    const info = this.store.state.runs.data?.runs.find((r) => r.name === run) ?? null;
    const alertType = firstAlertType(info);
    this.store.set({
      run,
      ...runViewState(),
      alertType,
      // a permalink's device and host facets come back with its run (the other filters are not in the URL)
      ...this.lists.openRun(run, alertType, restore?.run === run ? facetsOf(restore) : {}),
      timeline: this.timeline.initial(this.store.state.timeline.size, info?.counts.executions ?? 0),
      rootCause: run === null ? idle() : loading(),
    });
    if (save) this.saveUrl();
    if (run === null) return;
    void this.loadRootCause();
    this.rules.runShown();
    this.deviceFacets.runShown();
    this.timeline.show(0);
    this.loadAfterFirstPaint();
    if (restore?.run === run && restore.focus) {
      // a permalink's focus with its facets: both as they were (the list is not scrolled to a row it cannot place)
      if (restore.focus.kind === 'graph_execution')
        void this.focusGraphExecution(restore.focus.index, restore.alert, true);
      else void this.focusExecution(restore.focus.index, restore.alert);
    }
  }

  private saveUrl(push = false): void {
    const s = this.store.state;
    this.url.write(
      {
        run: s.run,
        focus: s.focus,
        alert: s.alertIndex,
        ...(s.mutes.length ? { mutes: s.mutes } : {}),
        ...facetsOf(s.geFilters),
      },
      push,
    );
    this.history.saved(push);
  }

  /** Back / Forward (or the in-app back): the run and focus the URL holds now, with no history entry of their own. */
  private restoreFromUrl(u: UrlState): Promise<void> {
    return this.history.restore(async () => {
      if (u.run !== null && u.run !== this.store.state.run) this.selectRun(u.run, u, false);
      else if (u.focus?.kind === 'graph_execution') await this.focusGraphExecution(u.focus.index, u.alert);
      else if (u.focus?.kind === 'execution') await this.focusExecution(u.focus.index, u.alert);
    });
  }

  /** The in-app back button: one focus back, as the browser's Back. */
  back(): void {
    if (this.history.canGoBack()) this.url.back();
  }

  private async loadRootCause(): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const seq = ++this.rootCauseSeq;
    // The card keeps showing the last answer while a live run's new one is fetched.
    if (this.store.state.rootCause.status !== 'loading')
      this.store.set({ rootCause: loading(this.store.state.rootCause) });
    try {
      const rc = await this.api.rootCause(run, mutesParam(this.store.state.mutes));
      if (seq === this.rootCauseSeq && run === this.store.state.run) this.store.set({ rootCause: ready(rc) });
    } catch (e) {
      if (seq === this.rootCauseSeq && run === this.store.state.run) this.store.set({ rootCause: failed(e) });
    }
  }

  /** The root-cause card's click: its alert, then the line to fix (a gradient's forward op, the data's source). */
  async focusRootCause(p: RootCauseProducer): Promise<void> {
    await this.focusAlert(p.alert);
    const fix = fixFrame(p);
    if (fix && fix !== p.user_frame && fix.path !== null && this.store.state.alertIndex === p.alert.index)
      this.sources.show({ fileIndex: fix.source_index, line: fix.line }, { selectedFrameId: null });
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
  private beginFocus(focus: Focus, alertIndex: number | null, keepFilters = false, position?: number): number {
    const seq = ++this.focusSeq;
    const patch: Partial<State> = {
      focus,
      alertIndex,
      focusDetail: loading(),
      frames: loading(),
      selectedFrameId: null,
      hint: null,
    };
    if (focus.kind === 'graph_execution') Object.assign(patch, this.scrollPatch(focus.index, keepFilters, position));
    const push = this.history.pushFor(this.store.state.focus, focus);
    this.store.set(patch);
    this.saveUrl(push);
    return seq;
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
    return { geScroll, geFilters: {}, geRows: this.lists.openTraces(s.run, {}), listNote, openedCall: null };
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
    const seq = this.beginFocus({ kind: 'graph_execution', index }, alertIndex, keepFilters, position);
    this.store.set({ op: loading(this.store.state.op) });
    const live = () => seq === this.focusSeq && run === this.store.state.run;
    try {
      const detail = await this.api.graphExecution(run, index);
      if (!live()) return;
      this.store.set({ focusDetail: ready(detail) });
      const op = await this.api.op(run, detail.graph_id, detail.op_name, index);
      if (!live()) return;
      this.store.set({ op: ready(op), inputRows: inputRowsOf(op, index) });
      this.rules.opShown(run, op.graph_id, op.op_name);
      await this.loadStack(run, op.stack_frame_ids, live);
    } catch (e) {
      if (live()) this.failLoading(e);
    }
  }

  /** Focuses one eager execution (a timeline box): its detail and its stack; Graph Structure shows its graph. */
  async focusExecution(index: number, alertIndex: number | null = null): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const seq = this.beginFocus({ kind: 'execution', index }, alertIndex);
    this.store.set({ op: idle(), inputRows: [] });
    this.timeline.reveal(index);
    const live = () => seq === this.focusSeq && run === this.store.state.run;
    try {
      const detail = await this.api.execution(run, index);
      if (!live()) return;
      this.store.set({ focusDetail: ready(detail) });
      await this.loadStack(run, detail.stack_frame_ids, live);
    } catch (e) {
      if (live()) this.failLoading(e);
    }
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
    this.sources.show(source, { frames: ready(resp.frames), selectedFrameId: frame?.id ?? null });
  }

  /**
   * Graph Structure navigation: show another op and move the Graph Execution list to its trace nearest the current
   * focus. Says plainly when the op has no trace instead of selecting nothing.
   */
  async navigateToOp(graphId: string, opName: string): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const near = this.store.state.focus?.kind === 'graph_execution' ? this.store.state.focus.index : null;
    const seq = ++this.focusSeq;
    this.store.set({ op: loading(this.store.state.op), hint: null });
    try {
      const op = await this.api.op(run, graphId, opName, near ?? undefined);
      if (seq !== this.focusSeq) return;
      const idx = nearestIndex(op.traces.indices, near);
      if (idx === null) {
        this.store.set({
          op: ready(op),
          inputRows: [],
          hint: `${opName} has no trace: TensorFlow did not instrument it (e.g. a function-input placeholder or a gradient op).`,
        });
        const live = () => seq === this.focusSeq;
        await this.loadStack(run, op.stack_frame_ids, live);
        return;
      }
      await this.focusGraphExecution(idx, null);
    } catch (e) {
      if (seq === this.focusSeq) this.store.set({ op: failed(e) });
    }
  }

  selectFrame(frame: StackFrame): void {
    const source = frame.path !== null ? { fileIndex: frame.source_index, line: frame.line } : this.store.state.source;
    this.sources.show(source, { selectedFrameId: frame.id });
  }

  /** Graph Structure's mode (the one-hop list or the drawn neighbourhood) and hops. */
  setGraphView(view: Partial<GraphView>): void {
    this.graph.setView(view);
  }

  selectSourceFile(fileIndex: number): void {
    this.sources.show({ fileIndex, line: null });
  }

  setFilters(filters: GraphExecutionFilters): void {
    const f = { ...filters };
    const openedCall = f.call === undefined ? null : this.store.state.openedCall;
    this.store.set({
      geFilters: f,
      geRows: this.lists.openTraces(this.store.state.run, f),
      listNote: null,
      openedCall,
    });
    this.saveUrl();
  }

  setAlertType(type: string | null): void {
    this.store.set({ alertType: type, alertRows: this.lists.openAlerts(this.store.state.run, type) });
  }

  /** The Alerts list shows rows [begin, end): fetch what it lacks. */
  loadAlertRows(begin: number, end: number): void {
    this.lists.alerts.request(begin, end);
  }

  /** The Graph Execution list shows rows [begin, end): fetch what it lacks. */
  loadGraphExecutionRows(begin: number, end: number): void {
    this.lists.traces.request(begin, end);
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
      const geRows = this.lists.openTraces(run, filters);
      this.store.set({ geFilters: filters, geRows, listNote: null, openedCall: first.call });
      this.graph.setView({ mode: 'drawn' });
      const row = first.call?.first_nonfinite ?? (first.rows[0] ? { index: first.rows[0].index, position: 0 } : null);
      if (row) await this.focusGraphExecution(row.index, null, false, row.position);
    } catch (e) {
      this.store.set({ listNote: `Could not open call #${index}: ${errorText(e)}` });
    }
  }
}

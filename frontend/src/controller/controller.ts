/**
 * The controller: with the helpers in this folder, the only code that talks to the API client and the only writer
 * of the store. Panels call its intents (select, focus, filter, page, scroll) and render what the store then holds.
 *
 * This file wires the helpers together and runs what belongs to a run: the runs poll, the run shown, the URL, and
 * what a live run's growth changes (decided here, when the runs poll answers). The "focus everywhere" chain is
 * focus_chain.ts (its intents are the controller's own: `focusAlert`, `stepAlert`, `focusGraphExecution`, …). The
 * data of the lists, the timeline, Source Code and the root cause is fetched by lists_loader.ts, timeline_loader.ts,
 * source_loader.ts and root_cause_loader.ts. The Tensor Values view's intents are `ctl.tensors` (tensor_loader.ts),
 * the mutes' and health map's `ctl.rules` (rules_intents.ts), Source Code's marker list's `ctl.lineOps`
 * (line_ops_loader.ts), the timeline's window `ctl.timeline` (timeline_loader.ts).
 */
import type { Api } from '../api/client.ts';
import type { GraphExecutionFilters } from '../api/requests.ts';
import type { Alert, CapsuleSamplesResponse, CapsulesResponse, RootCauseProducer, StackFrame } from '../api/wire.ts';
import { Store, failed, idle, loading, ready, errorText, runViewState, type GraphView } from '../store/store.ts';
import { browserUrl, type UrlIO, type UrlState } from './url.ts';
import { ListsLoader } from './lists_loader.ts';
import { TimelineLoader } from './timeline_loader.ts';
import { SourceLoader } from './source_loader.ts';
import { LineOpsLoader } from './line_ops_loader.ts';
import { TensorLoader } from './tensor_loader.ts';
import { GraphLoader } from './graph_loader.ts';
import { RootCauseLoader } from './root_cause_loader.ts';
import { CompareLoader } from './compare_loader.ts';
import { CompareNodesLoader } from './compare_rows.ts';
import { CompareValuesLoader } from './compare_values_loader.ts';
import { OverlayStack } from './overlay_stack.ts';
import { betterDefault, choiceMayChange, defaultRun, waitForChoice } from './run_choice.ts';
import { FocusHistory } from './focus_history.ts';
import { FocusChain } from './focus_chain.ts';
import { RulesIntents } from './rules_intents.ts';
import { DeviceFacets } from './device_facets.ts';
import { RunsPoll } from './runs_poll.ts';
import { firstAlertType, followGrowth, type GrowthParts } from './run_growth.ts';

export type { UrlIO };

/** The device and host facets of filters (or of a URL state), without empty ones. */
function facetsOf(f: { device?: string; host?: string; call?: number }): {
  device?: string;
  host?: string;
  call?: number;
} {
  return {
    ...(f.device ? { device: f.device } : {}),
    ...(f.host ? { host: f.host } : {}),
    ...(f.call !== undefined ? { call: f.call } : {}),
  };
}

export class Controller {
  private pendingUrl: UrlState | null = null;
  /** The run shown was the default (run_choice.ts), not the user's nor the URL's: a later poll may correct it. */
  private pickedByDefault = false;
  private startedAt = 0;
  private readonly poll: RunsPoll;
  /** True once the dashboard's first paint is on screen: the data not needed for it is fetched from then on. */
  private firstPaintOver = false;
  /** The run whose root cause was focused when it was shown (previewRootCauseAtStart). */
  private autoFocused: string | null = null;
  private readonly lists: ListsLoader;
  /** The timeline's window: paging, zoom, a minimap click or dragged range, the panel's width. */
  readonly timeline: TimelineLoader;
  private readonly sources: SourceLoader;
  private readonly history: FocusHistory;
  private readonly focus: FocusChain;
  private readonly rootCause: RootCauseLoader;
  /** The Tensor Values view's intents (open, axes, fixed indices, cells in view, focus a position, close). */
  readonly tensors: TensorLoader;
  private readonly graph: GraphLoader;
  /** Mutes, the rules' alert summary, the health map (#18). */
  readonly rules: RulesIntents;
  private readonly deviceFacets: DeviceFacets;
  /** Source Code's marker list: the ops a line created; focusing one (#17). */
  readonly lineOps: LineOpsLoader;
  /** "Compare with…": the baseline run, the comparison, focusing its sides (#27). */
  readonly compare: CompareLoader;
  /** Graph Structure's drawn nodes compared with the baseline run (#27). */
  readonly compareNodes: CompareNodesLoader;
  /** While comparing, the Tensor Values view's tensor in both runs and A − B (it follows the view). */
  readonly compareValues: CompareValuesLoader;
  /** What lies over the dashboard; Escape closes the topmost (#40 item 9). */
  readonly overlays: OverlayStack;

  constructor(
    readonly store: Store,
    private readonly api: Api,
    private readonly url: UrlIO = browserUrl,
  ) {
    this.poll = new RunsPoll(store, () => this.refreshRuns());
    this.lists = new ListsLoader(store, api);
    this.timeline = new TimelineLoader(store, api);
    this.sources = new SourceLoader(store, api);
    this.history = new FocusHistory(store);
    url.listen((s) => void this.restoreFromUrl(s));
    this.tensors = new TensorLoader(store, api);
    this.overlays = new OverlayStack(store, () => this.tensors.close());
    this.graph = new GraphLoader(store, api);
    this.deviceFacets = new DeviceFacets(store, api);
    this.lineOps = new LineOpsLoader(store, api, {
      focusTrace: (index) => this.focusGraphExecution(index),
      navigateToOp: (graphId, opName) => this.navigateToOp(graphId, opName),
    });
    this.rootCause = new RootCauseLoader(store, api);
    this.compare = new CompareLoader(store, api, {
      focusGraphExecution: (index) => this.focusGraphExecution(index),
      focusExecution: (index) => this.focusExecution(index),
      reopenTraces: () => {
        const f = this.store.state.geFilters;
        this.setFilters({ ...f, divergentOnly: this.store.state.compareBase !== null ? f.divergentOnly : undefined });
      },
    });
    this.compareNodes = new CompareNodesLoader(store, api);
    this.compareValues = new CompareValuesLoader(store, api);
    // the drawn neighbourhood follows the op shown, however it came to be shown (a focus, a navigation)
    store.subscribe((s, prev) => {
      if (s.op !== prev.op && s.op.status === 'ready') this.graph.refresh();
      // the timeline's window is in the URL (replaced, not a history entry): a permalink opens where it was
      if (s.run !== null && s.run === prev.run && s.timeline.begin !== prev.timeline.begin) this.saveUrl();
      // so is the comparison (`cmp=`): a reload or a shared link compares again
      const tolerances = s.compareTolerances !== prev.compareTolerances;
      if (s.run !== null && s.run === prev.run && (s.compareBase !== prev.compareBase || tolerances)) this.saveUrl();
      // a root cause found later (a long indexing run) is landed on when it is found, as one found at once
      if (s.rootCause !== prev.rootCause && s.rootCause.status === 'ready') this.previewRootCauseAtStart();
    });
    this.rules = new RulesIntents(store, api, {
      saveUrl: () => this.saveUrl(),
      reopenAlerts: () => {
        this.setAlertType(this.store.state.alertType);
        if (this.firstPaintOver) void this.timeline.loadMarks(); // the mutes changed what the minimap marks
      },
      loadRootCause: () => void this.rootCause.load(),
    });
    const { lists, sources, timeline, graph, rules, history } = this;
    const saveUrl = (push: boolean) => this.saveUrl(push);
    this.focus = new FocusChain(store, api, { lists, sources, timeline, graph, rules, history, saveUrl });
  }

  /** First load: runs, then the run and focus from the URL (if still valid). The runs request leaves at once, so a
   * caller that builds the page afterwards does not delay it. */
  async start(): Promise<void> {
    this.pendingUrl = this.url.read();
    this.startedAt = performance.now();
    await this.refreshRuns();
    this.poll.schedule();
  }

  stop(): void {
    this.poll.stop();
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
    this.previewRootCauseAtStart();
  }

  /** A run shown without a focus previews its root cause once the page is drawn: Source Code and Stack Trace show
   * its line and stack without a click (focus_chain.ts previewRootCause: no focus is made, so nothing else moves);
   * once per run shown, never over a focus the user or the URL chose. */
  private previewRootCauseAtStart(): void {
    const s = this.store.state;
    const rc = s.rootCause.data;
    if (!this.firstPaintOver || s.run === null || s.focus !== null || this.autoFocused === s.run) return;
    if (rc?.run !== s.run || rc.status !== 'found' || !rc.producer) return;
    this.autoFocused = s.run;
    void this.focus.previewRootCause(rc.producer);
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
      } else changed = followGrowth(before, this.growthParts());
      if (!choiceMayChange(resp.runs)) this.pickedByDefault = false;
      if (this.store.state.run !== null) this.pendingUrl = null; // kept while the run is being chosen
    } catch (e) {
      // Keep the last good runs on a failed poll: a transient error must not blank the dashboard.
      if (!this.store.state.runs.data) this.store.set({ runs: failed(e) });
      else this.store.set({ runs: { ...this.store.state.runs, error: errorText(e) } });
    }
    return changed;
  }

  private selectRunFromUrl(names: string[]): void {
    const wanted = this.pendingUrl?.run;
    const runs = this.store.state.runs.data?.runs ?? [];
    if (waitForChoice(runs, wanted, performance.now() - this.startedAt)) return; // no run yet: never a wrong one
    const fallback = defaultRun(runs);
    const run = wanted && names.includes(wanted) ? wanted : fallback;
    this.pickedByDefault = run === fallback && !(wanted && names.includes(wanted));
    // With nothing in the URL, the default run is what a reload picks anyway: writing it would only cost the first
    // paint a history update in TensorBoard's page too (~20 ms of its change detection, measured).
    const p = this.pendingUrl;
    const urlEmpty = !p || (p.run === null && p.focus === null && p.alert === null);
    if (run !== this.store.state.run) this.selectRun(run, this.pendingUrl, !(urlEmpty && run === fallback));
  }

  /** The user picked a run (the picker, the runs overview): it stays, whatever the default becomes. */
  /** The NaN capsules under the logdir (the capsule cards ask when opened: not part of the polled state). */
  capsules(): Promise<CapsulesResponse> {
    return this.api.capsules();
  }

  /** A page of one batch array's per-sample table of a capsule (the card asks as it pages). */
  capsuleSamples(capsule: string, array: string, begin: number, end: number): Promise<CapsuleSamplesResponse> {
    return this.api.capsuleSamples(capsule, array, begin, end);
  }

  chooseRun(run: string): void {
    this.pickedByDefault = false;
    if (run !== this.store.state.run) this.selectRun(run);
  }

  private growthParts(): GrowthParts {
    const { store, lists, deviceFacets, timeline, sources, rules, rootCause } = this;
    const firstPaintOver = () => this.firstPaintOver;
    const setAlertType = (type: string | null) => this.setAlertType(type);
    return { store, lists, deviceFacets, timeline, sources, rules, rootCause, firstPaintOver, setAlertType };
  }

  /** Wakes the poll now (e.g. the tab became visible again). */
  pollSoon(): void {
    this.poll.soon();
  }

  /** Shows `run` (null: none): every run-scoped view starts over; `restore` (from the URL) brings back its focus. */
  selectRun(run: string | null, restore: UrlState | null = null, save = true): void {
    this.focus.dropPending();
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
    void this.rootCause.load().then(() => this.previewRootCauseAtStart());
    this.rules.runShown();
    this.deviceFacets.runShown();
    this.timeline.show(restore?.run === run ? (restore.timeline ?? 0) : 0);
    this.loadAfterFirstPaint();
    if (restore?.run === run && restore.cmp && restore.cmp !== run) {
      if (restore.tol) this.store.set({ compareTolerances: restore.tol });
      void this.compare.choose(restore.cmp);
    }
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
        ...(s.timeline.begin ? { timeline: s.timeline.begin } : {}),
        ...(s.compareBase !== null ? { cmp: s.compareBase, tol: s.compareTolerances } : {}),
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

  // The focus chain's intents (focus_chain.ts).

  /** The root-cause card's click: its alert, then the line to fix (a gradient's forward op, the data's source). */
  focusRootCause(p: RootCauseProducer): Promise<void> {
    return this.focus.focusRootCause(p);
  }

  focusAlert(alert: Alert): Promise<void> {
    return this.focus.focusAlert(alert);
  }

  /** Next (dir 1) or previous (-1) alert in wall-time order, from the focused one (keys n / p, the arrows). */
  stepAlert(dir: number): Promise<void> {
    return this.focus.stepAlert(dir);
  }

  /** One graph execution trace, everywhere. `keepFilters`: a filtered list that does not hold it keeps its filters;
   * `position`: its place in the filtered list, when the caller knows it. */
  focusGraphExecution(
    index: number,
    alertIndex: number | null = null,
    keepFilters = false,
    position?: number,
  ): Promise<void> {
    return this.focus.focusGraphExecution(index, alertIndex, keepFilters, position);
  }

  /** One eager execution (a timeline box), everywhere. */
  focusExecution(index: number, alertIndex: number | null = null): Promise<void> {
    return this.focus.focusExecution(index, alertIndex);
  }

  /** Graph Structure navigation: another op, and its trace nearest the current focus. */
  navigateToOp(graphId: string, opName: string): Promise<void> {
    return this.focus.navigateToOp(graphId, opName);
  }

  selectFrame(frame: StackFrame): void {
    this.focus.selectFrame(frame);
  }

  /** One tf.function call (a timeline box): its traces listed, its first NaN/∞ (else its first trace) focused. */
  openCall(index: number): Promise<void> {
    return this.focus.openCall(index);
  }
}

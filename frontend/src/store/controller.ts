/**
 * Actions: everything that loads data into the store. One place runs the "focus everywhere" chain
 * (trace → op → stack → innermost user frame → source line), so every entry point (alert click, row click,
 * root-cause card, graph navigation, URL restore) behaves the same.
 */
import type { Api } from '../api/client.ts';
import type { Alert, OpInfo, StackFrame } from '../api/wire.ts';
import { Store, failed, idle, loading, ready, errorText, runViewState, type Focus } from './store.ts';
import { readUrlState, writeUrlState, type UrlState } from './url.ts';
import { isStandingReadProblem } from '../api/notice_codes.ts';

/** Innermost user frame (frames are outermost first), else the innermost frame, else null. */
export function innermostUserFrame(frames: StackFrame[]): StackFrame | null {
  for (let i = frames.length - 1; i >= 0; i--) if (frames[i]!.is_user) return frames[i]!;
  return frames.length ? frames[frames.length - 1]! : null;
}

/** The trace index in `indices` closest to `near` (ties: the earlier one), or null when there is none. */
export function nearestIndex(indices: number[], near: number | null): number | null {
  if (!indices.length) return null;
  if (near === null) return indices[0]!;
  let best = indices[0]!;
  for (const i of indices) if (Math.abs(i - near) < Math.abs(best - near)) best = i;
  return best;
}

export interface UrlIO {
  read(): UrlState;
  write(s: UrlState): void;
}

const browserUrl: UrlIO = { read: readUrlState, write: writeUrlState };

export class Controller {
  /** Bumped by each focus change; an async step whose token is stale drops its result. */
  private focusSeq = 0;
  private scrollSeq = 0;
  private pollTimer: ReturnType<typeof setTimeout> | null = null;
  private pollDelay = 1000;
  private pendingUrl: UrlState | null = null;
  private stopped = false;

  constructor(
    readonly store: Store,
    readonly api: Api,
    private readonly url: UrlIO = browserUrl,
  ) {}

  /** First load: runs, then the run and focus from the URL (if still valid). */
  async start(): Promise<void> {
    this.pendingUrl = this.url.read();
    await this.refreshRuns();
    this.schedulePoll();
  }

  stop(): void {
    this.stopped = true;
    if (this.pollTimer !== null) clearTimeout(this.pollTimer);
  }

  private async refreshRuns(): Promise<boolean> {
    const s = this.store.state;
    if (!s.runs.data) this.store.set({ runs: loading(s.runs) });
    let changed = false;
    try {
      const resp = await this.api.runs();
      const prevRun = this.store.runInfo();
      this.store.set({ runs: ready(resp) });
      const names = resp.runs.map((r) => r.name);
      let run = this.store.state.run;
      if (run === null || !names.includes(run)) {
        const wanted = this.pendingUrl?.run;
        run = wanted && names.includes(wanted) ? wanted : (names[0] ?? null);
        // With nothing in the URL, the first run is what a reload picks anyway: writing it would only cost the
        // first paint a history update in TensorBoard's page too (~20 ms of its change detection, measured).
        const urlEmpty = !this.pendingUrl || (this.pendingUrl.run === null && this.pendingUrl.focus === null && this.pendingUrl.alert === null);
        if (run !== this.store.state.run) this.selectRun(run, this.pendingUrl, !(urlEmpty && run === names[0]));
        changed = true;
      }
      this.pendingUrl = null;
      const now = this.store.runInfo();
      if (prevRun && now && JSON.stringify(prevRun.counts) + prevRun.status.done !== JSON.stringify(now.counts) + now.status.done) {
        changed = true;
      }
    } catch (e) {
      // Keep the last good runs on a failed poll: a transient error must not blank the dashboard.
      if (!this.store.state.runs.data) this.store.set({ runs: failed(e) });
      else this.store.set({ runs: { ...this.store.state.runs, error: errorText(e) } });
    }
    return changed;
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

  selectRun(run: string | null, restore: UrlState | null = null, save = true): void {
    this.focusSeq++;
    this.store.set({ run, ...runViewState() });
    if (save) this.saveUrl();
    if (run !== null && restore?.run === run && restore.focus) {
      if (restore.focus.kind === 'graph_execution') void this.focusGraphExecution(restore.focus.index, restore.alert);
      else void this.focusExecution(restore.focus.index, restore.alert);
    }
  }

  private saveUrl(): void {
    const s = this.store.state;
    this.url.write({ run: s.run, focus: s.focus, alert: s.alertIndex });
  }

  focusAlert(alert: Alert): Promise<void> {
    if (alert.source === 'execution') return this.focusExecution(alert.source_index, alert.index);
    return this.focusGraphExecution(alert.source_index, alert.index);
  }

  private beginFocus(focus: Focus, alertIndex: number | null): number {
    const seq = ++this.focusSeq;
    const patch: Parameters<Store['set']>[0] = {
      focus,
      alertIndex,
      focusDetail: loading(),
      frames: loading(),
      selectedFrameId: null,
      hint: null,
    };
    if (focus.kind === 'graph_execution') patch.geScroll = { index: focus.index, seq: ++this.scrollSeq };
    this.store.set(patch);
    this.saveUrl();
    return seq;
  }

  /** Focuses one graph execution trace: its row, its op, the op's creation stack and the user's source line. */
  async focusGraphExecution(index: number, alertIndex: number | null = null): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const seq = this.beginFocus({ kind: 'graph_execution', index }, alertIndex);
    this.store.set({ op: loading(this.store.state.op) });
    const live = () => seq === this.focusSeq && run === this.store.state.run;
    try {
      const detail = await this.api.graphExecution(run, index);
      if (!live()) return;
      this.store.set({ focusDetail: ready(detail) });
      const op = await this.api.op(run, detail.graph_id, detail.op_name, index);
      if (!live()) return;
      this.store.set({ op: ready(op), inputRows: inputRowsOf(op, index) });
      await this.loadStack(run, op.stack_frame_ids, live);
    } catch (e) {
      if (!live()) return;
      const s = this.store.state;
      this.store.set({
        focusDetail: s.focusDetail.status === 'loading' ? failed(e) : s.focusDetail,
        op: s.op.status === 'loading' ? failed(e) : s.op,
        frames: s.frames.status === 'loading' ? failed(e) : s.frames,
      });
    }
  }

  /** Focuses one eager execution (a timeline box): its detail and its stack; Graph Structure shows its graph. */
  async focusExecution(index: number, alertIndex: number | null = null): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const seq = this.beginFocus({ kind: 'execution', index }, alertIndex);
    this.store.set({ op: idle(), inputRows: [] });
    const live = () => seq === this.focusSeq && run === this.store.state.run;
    try {
      const detail = await this.api.execution(run, index);
      if (!live()) return;
      this.store.set({ focusDetail: ready(detail) });
      await this.loadStack(run, detail.stack_frame_ids, live);
    } catch (e) {
      if (!live()) return;
      const s = this.store.state;
      this.store.set({
        focusDetail: s.focusDetail.status === 'loading' ? failed(e) : s.focusDetail,
        frames: s.frames.status === 'loading' ? failed(e) : s.frames,
      });
    }
  }

  private async loadStack(run: string, ids: string[], live: () => boolean): Promise<void> {
    this.store.set({ frames: loading() });
    const resp = await this.api.stackFrames(run, ids);
    if (!live()) return;
    const frame = innermostUserFrame(resp.frames);
    this.store.set({
      frames: ready(resp.frames),
      selectedFrameId: frame?.id ?? null,
      source: frame && frame.path !== null ? { fileIndex: frame.source_index, line: frame.line } : this.store.state.source,
    });
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
    this.store.set({
      selectedFrameId: frame.id,
      source: frame.path !== null ? { fileIndex: frame.source_index, line: frame.line } : this.store.state.source,
    });
  }

  selectSourceFile(fileIndex: number): void {
    this.store.set({ source: { fileIndex, line: null } });
  }

  setFilters(f: Parameters<Store['set']>[0]['geFilters']): void {
    this.store.set({ geFilters: { ...f } });
  }

  setAlertType(type: string | null): void {
    this.store.set({ alertType: type });
  }

  scrollGraphExecutionTo(index: number): void {
    this.store.set({ geScroll: { index, seq: ++this.scrollSeq } });
  }
}

/** Trace indices of the focused op's inputs nearest the focus, so their rows can be tinted. */
export function inputRowsOf(op: OpInfo, near: number): number[] {
  const out: number[] = [];
  for (const input of op.inputs) {
    const before = input.traces.indices.filter((i) => i <= near);
    const idx = nearestIndex(before.length ? before : input.traces.indices, near);
    if (idx !== null) out.push(idx);
  }
  return out;
}

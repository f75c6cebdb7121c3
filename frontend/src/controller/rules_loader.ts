/**
 * Part of the controller (#18): the alert summary after the mutes (totals per type, what each mute hides, the rules
 * the dump cannot judge), the health map's page of rows, and the focused op's health across steps (Graph
 * Structure's sparkline). Each request drops its answer when the run, the mutes or the asked view changed meanwhile.
 */
import type { Api } from '../api/client.ts';
import { mutesParam } from '../store/mutes.ts';
import { failed, loading, ready, type Store } from '../store/store.ts';

/** Rows of the health map per page, and step bins (the canvas shows about this many). */
export const MAP_ROWS = 60;
export const MAP_COLUMNS = 200;
export const SPARK_COLUMNS = 120;
const PENDING_POLL_MS = 700;

export class RulesLoader {
  private summarySeq = 0;
  private mapSeq = 0;
  private sparkSeq = 0;

  constructor(
    private readonly store: Store,
    private readonly api: Api,
    /** Called when the rules' findings arrived after a pending answer (the open alert list is fetched again). */
    private readonly onRulesReady: () => void = () => {},
  ) {}

  /** Totals only (begin = end = 0): O(1) on the server once the rules are evaluated. */
  async loadSummary(): Promise<void> {
    const { run, mutes } = this.store.state;
    if (run === null) return;
    const seq = ++this.summarySeq;
    this.store.set({ alertSummary: loading(this.store.state.alertSummary) });
    try {
      const resp = await this.api.alerts(run, 0, 0, undefined, mutesParam(mutes));
      if (seq !== this.summarySeq) return;
      const wasPending = this.store.state.alertSummary.data?.rules_pending ?? false;
      this.store.set({ alertSummary: ready(resp) });
      // the rules' whole-run pass runs on the server after the dump is read: ask again until their findings are in
      if (resp.rules_pending && this.store.runInfo()?.status.done)
        setTimeout(() => seq === this.summarySeq && void this.loadSummary(), PENDING_POLL_MS);
      else if (wasPending && !resp.rules_pending) this.onRulesReady();
    } catch (e) {
      if (seq === this.summarySeq) this.store.set({ alertSummary: failed(e) });
    }
  }

  async loadMap(begin: number): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const seq = ++this.mapSeq;
    this.store.set({ healthMap: loading(this.store.state.healthMap) });
    try {
      const opContains = this.store.state.healthMapOps;
      const resp = await this.api.healthMap(run, { begin, end: begin + MAP_ROWS, columns: MAP_COLUMNS, opContains });
      if (seq === this.mapSeq && run === this.store.state.run) this.store.set({ healthMap: ready(resp) });
    } catch (e) {
      if (seq === this.mapSeq) this.store.set({ healthMap: failed(e) });
    }
  }

  async loadOpHealth(run: string, graphId: string, opName: string): Promise<void> {
    const seq = ++this.sparkSeq;
    this.store.set({ opHealth: loading() });
    try {
      const q = { begin: 0, end: 8, columns: SPARK_COLUMNS, graphId, opName };
      const resp = await this.api.healthMap(run, q);
      if (seq === this.sparkSeq && run === this.store.state.run) this.store.set({ opHealth: ready(resp) });
    } catch (e) {
      if (seq === this.sparkSeq) this.store.set({ opHealth: failed(e) });
    }
  }
}

/**
 * Part of the controller (#18): the alert summary after the mutes (totals per type, what each mute hides, the rules
 * the dump cannot judge), the health map's page of rows, and the focused op's health across steps (Graph
 * Structure's sparkline). Each request drops its answer when the run, the mutes or the asked view changed meanwhile.
 */
import type { Api } from '../api/client.ts';
import { mutesParam } from '../store/mutes.ts';
import { loading, type Store } from '../store/store.ts';
import { Latest, settle } from './latest.ts';

/** Rows of the health map per page, and step bins (the canvas shows about this many). */
export const MAP_ROWS = 60;
export const MAP_COLUMNS = 200;
export const SPARK_COLUMNS = 120;
const PENDING_POLL_MS = 700;

export class RulesLoader {
  private readonly summaryLatest = new Latest();
  private readonly mapLatest = new Latest();
  private readonly sparkLatest = new Latest();

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
    const live = this.summaryLatest.begin();
    this.store.set({ alertSummary: loading(this.store.state.alertSummary) });
    const answer = this.api.alerts(run, 0, 0, undefined, mutesParam(mutes));
    await settle(answer, live, (alertSummary) => {
      const wasPending = this.store.state.alertSummary.data?.rules_pending ?? false;
      this.store.set({ alertSummary });
      const resp = alertSummary.data;
      if (resp === null) return;
      // the rules' whole-run pass runs on the server after the dump is read: ask again until their findings are in
      if (resp.rules_pending && this.store.runInfo()?.status.done)
        setTimeout(() => live() && void this.loadSummary(), PENDING_POLL_MS);
      else if (wasPending && !resp.rules_pending) this.onRulesReady();
    });
  }

  async loadMap(begin: number): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const latest = this.mapLatest.begin();
    this.store.set({ healthMap: loading(this.store.state.healthMap) });
    const opContains = this.store.state.healthMapOps;
    const answer = this.api.healthMap(run, { begin, end: begin + MAP_ROWS, columns: MAP_COLUMNS, opContains });
    // an error is shown whatever run is shown now; an answer only for its run
    await settle(answer, latest, (healthMap) => {
      if (healthMap.status === 'error' || run === this.store.state.run) this.store.set({ healthMap });
    });
  }

  async loadOpHealth(run: string, graphId: string, opName: string): Promise<void> {
    const latest = this.sparkLatest.begin();
    this.store.set({ opHealth: loading() });
    const answer = this.api.healthMap(run, { begin: 0, end: 8, columns: SPARK_COLUMNS, graphId, opName });
    await settle(answer, latest, (opHealth) => {
      if (opHealth.status === 'error' || run === this.store.state.run) this.store.set({ opHealth });
    });
  }
}

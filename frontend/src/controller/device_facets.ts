/**
 * Graph Execution's device and host facets: where the run's ops ran (the `devices` route), fetched when a run is
 * shown and again as a live run grows (the options each facet offers: store/facets.ts). Part of the controller: the
 * chosen device and host are `geFilters.device` / `geFilters.host`, set through `Controller.setFilters`, kept in the
 * URL.
 */
import type { Api } from '../api/client.ts';
import { loading, type Store } from '../store/store.ts';
import { Latest, settle } from './latest.ts';

/** A live run's devices are asked again at most this often (each answer is a pass over the run's rows). */
export const REFRESH_MS = 10_000;

export class DeviceFacets {
  private readonly latest = new Latest();
  private loadedAt = 0;

  constructor(
    private readonly store: Store,
    private readonly api: Api,
    private readonly now: () => number = Date.now,
  ) {}

  /** A run is shown: its devices (the previous run's were cleared with its view). */
  runShown(): void {
    void this.load();
  }

  /** The run grew: ask again when it was read to its end, else at most every REFRESH_MS. */
  grew(doneNow: boolean): void {
    if (doneNow || this.now() - this.loadedAt >= REFRESH_MS) void this.load();
  }

  private async load(): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const latest = this.latest.begin();
    this.loadedAt = this.now();
    this.store.set({ devices: loading(this.store.state.devices) });
    const live = () => latest() && run === this.store.state.run;
    await settle(this.api.devices(run), live, (devices) => this.store.set({ devices }));
  }
}

/**
 * Graph Execution's device and host facets: where the run's ops ran (the `devices` route), fetched when a run is
 * shown and again as a live run grows; and the options each facet offers. Part of the controller: the chosen device
 * and host are `geFilters.device` / `geFilters.host`, set through `Controller.setFilters` and kept in the URL.
 */
import type { Api, GraphExecutionFilters } from '../api/client.ts';
import type { DevicesResponse } from '../api/wire.ts';
import { deviceLabels } from '../widgets/devices.ts';
import { failed, loading, ready, type Store } from './store.ts';

/** A live run's devices are asked again at most this often (each answer is a pass over the run's rows). */
export const REFRESH_MS = 10_000;

export interface FacetOption {
  value: string;
  /** What the select shows: the short device name (deviceLabels), or the host. */
  label: string;
  /** Graph execution traces there. */
  traces: number;
}

export interface DeviceFacetOptions {
  devices: FacetOption[];
  hosts: FacetOption[];
}

/** The options of both facets: every device that ran a traced op and every host that recorded a trace, with their
 * trace counts; a chosen value the run does not have (a link from another run) is kept as an option with 0 traces,
 * so the select shows what filters the list instead of silently dropping it. */
export function facetOptions(resp: DevicesResponse | null, chosen: GraphExecutionFilters): DeviceFacetOptions {
  const byDevice = new Map<string, number>();
  const byHost = new Map<string, number>();
  for (const d of resp?.devices ?? []) {
    if (d.graph_executions === 0) continue;
    if (d.device_name !== null) byDevice.set(d.device_name, (byDevice.get(d.device_name) ?? 0) + d.graph_executions);
    byHost.set(d.host, (byHost.get(d.host) ?? 0) + d.graph_executions);
  }
  if (chosen.device && !byDevice.has(chosen.device)) byDevice.set(chosen.device, 0);
  if (chosen.host && !byHost.has(chosen.host)) byHost.set(chosen.host, 0);
  const names = [...byDevice.keys()].sort();
  const labels = deviceLabels(names);
  return {
    devices: names.map((value) => ({ value, label: labels.get(value) ?? value, traces: byDevice.get(value) ?? 0 })),
    hosts: [...byHost.keys()].sort().map((value) => ({ value, label: value, traces: byHost.get(value) ?? 0 })),
  };
}

/** A facet is worth showing when it can tell rows apart, or when it filters the list now (so it can be cleared). */
export const facetShown = (options: FacetOption[], chosen: string | undefined): boolean =>
  options.length > 1 || !!chosen;

export class DeviceFacets {
  private seq = 0;
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
    const seq = ++this.seq;
    this.loadedAt = this.now();
    this.store.set({ devices: loading(this.store.state.devices) });
    try {
      const resp = await this.api.devices(run);
      if (seq === this.seq && run === this.store.state.run) this.store.set({ devices: ready(resp) });
    } catch (e) {
      if (seq === this.seq && run === this.store.state.run) this.store.set({ devices: failed(e) });
    }
  }
}

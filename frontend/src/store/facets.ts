/**
 * The options of Graph Execution's device and host facets, from the `devices` answer the store holds
 * (controller/device_facets.ts fetches it): pure functions the panel draws from.
 */
import type { GraphExecutionFilters } from '../api/requests.ts';
import type { DevicesResponse } from '../api/wire.ts';
import { deviceLabels } from '../widgets/devices.ts';

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

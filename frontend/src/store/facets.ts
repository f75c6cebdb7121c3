/**
 * The options of Graph Execution's device and host facets, from the `devices` answer the store holds
 * (controller/device_facets.ts fetches it): pure functions the panel draws from.
 */
import type { GraphExecutionFilters } from '../api/requests.ts';
import type { DevicesResponse, HostFacts } from '../api/wire.ts';
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
  const hostLabels = new Map((resp?.host_facts ?? []).map((f) => [f.host, hostLabel(f)]));
  return {
    devices: names.map((value) => ({ value, label: labels.get(value) ?? value, traces: byDevice.get(value) ?? 0 })),
    hosts: [...byHost.keys()].sort().map((value) => ({
      value,
      label: hostLabels.get(value) ?? value,
      traces: byHost.get(value) ?? 0,
    })),
  };
}

/** A host as its facet shows it: "worker-3 · first NaN/∞", "worker-0 · NaN/∞ +2.15 s" (after the first host). */
export function hostLabel(f: HostFacts): string {
  const nf = f.first_nonfinite;
  if (!nf) return f.host;
  return nf.after_first_s === 0 ? `${f.host} · first NaN/∞` : `${f.host} · NaN/∞ +${nf.after_first_s.toFixed(2)} s`;
}

/** A facet is worth showing when it can tell rows apart, or when it filters the list now (so it can be cleared). */
export const facetShown = (options: FacetOption[], chosen: string | undefined): boolean =>
  options.length > 1 || !!chosen;

/**
 * What a live run's growth changes (part of the controller), decided when the runs poll answers: what grew is
 * fetched again in place, so scroll positions, selection and focus stay.
 */
import type { RunInfo } from '../api/wire.ts';
import type { State, Store } from '../store/store.ts';
import type { DeviceFacets } from './device_facets.ts';
import type { ListsLoader } from './lists_loader.ts';
import type { RootCauseLoader } from './root_cause_loader.ts';
import type { RulesIntents } from './rules_intents.ts';
import type { SourceLoader } from './source_loader.ts';
import type { TimelineLoader } from './timeline_loader.ts';

/** The controller's helpers a run's growth reaches, and its two decisions they need. */
export interface GrowthParts {
  store: Store;
  lists: ListsLoader;
  deviceFacets: DeviceFacets;
  timeline: TimelineLoader;
  sources: SourceLoader;
  rules: RulesIntents;
  rootCause: RootCauseLoader;
  /** The dashboard's first paint is on screen (the data it did not need is fetched from then on). */
  firstPaintOver(): boolean;
  setAlertType(type: string | null): void;
}

/** The alert type the Alerts panel opens for a run: the first with alerts, so the first alert is one click away. */
export function firstAlertType(info: RunInfo | null): string | null {
  const byType = info?.counts.alerts_by_type ?? {};
  return Object.keys(byType).find((t) => (byType[t] ?? 0) > 0) ?? null;
}

/**
 * The selected run's counts after a poll, against `before`: what grew is fetched again in place. Returns whether
 * anything changed (the poll then stays at its fastest).
 */
export function followGrowth(before: State, p: GrowthParts): boolean {
  const was = before.runs.data?.runs.find((r) => r.name === before.run) ?? null;
  const now = p.store.runInfo();
  if (!was || !now) return false;
  const c0 = was.counts;
  const c1 = now.counts;
  if (c1.graph_executions !== c0.graph_executions) p.lists.traces.invalidate();
  const readNow = now.status.done && !was.status.done;
  if (c1.graph_executions !== c0.graph_executions || c1.executions !== c0.executions || readNow)
    p.deviceFacets.grew(readNow);
  if (c1.executions !== c0.executions) p.timeline.grew(before);
  if (c1.source_files !== c0.source_files && p.firstPaintOver()) void p.sources.loadFiles();
  if (c1.ops !== c0.ops || c1.alerts !== c0.alerts) p.sources.opsGrew();
  // The root cause is asked again when alerts appear, and once when the run is read to its end: a run that had
  // no record yet said "unknown" and, with no alert ever, would keep saying it (not on every batch of traces:
  // each new index version is a new whole-run analysis on the server).
  if (readNow && c1.alerts === c0.alerts) void p.rootCause.load();
  if (c1.alerts !== c0.alerts || readNow) p.rules.grew();
  if (c1.alerts !== c0.alerts) {
    void p.rootCause.load();
    if (p.firstPaintOver()) void p.timeline.loadMarks();
    if (p.store.state.alertType === null) p.setAlertType(firstAlertType(now));
    else p.lists.alerts.invalidate();
  }
  return JSON.stringify(c0) + was.status.done !== JSON.stringify(c1) + now.status.done;
}

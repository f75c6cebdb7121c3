/**
 * Which run the dashboard opens on when the URL names none: the run whose first NaN/∞ is earliest (from each run's
 * summary, `analysis/run_verdict.py:summary`), else the first run with alerts, else the first run. Alphabetical
 * order would open a logdir of eight runs on its only clean one.
 */
import type { RunInfo } from '../api/wire.ts';
import type { State } from '../store/store.ts';

export function defaultRun(runs: RunInfo[]): string | null {
  let best: RunInfo | null = null;
  for (const r of runs) {
    const t = r.summary?.first_nan?.wall_time;
    if (t === undefined || t === null) continue;
    if (!best || t < best.summary.first_nan!.wall_time) best = r;
  }
  if (best) return best.name;
  return (runs.find((r) => r.counts.alerts > 0) ?? runs[0])?.name ?? null;
}

/** True while some run's summary may still change the default (not read, or its root cause not built yet). */
export function choiceMayChange(runs: RunInfo[]): boolean {
  return runs.some((r) => r.summary?.status === 'indexing' || r.summary?.status === 'analyzing');
}

/** How long the first paint may wait for the run summaries before it opens the default of the moment (a huge dump
 * indexes for minutes; betterDefault may still switch to a better run later, before anything is looked at). */
export const CHOICE_WAIT_MS = 6000;

/**
 * True where the dashboard should wait before opening a run: the URL names none that exists, there are several
 * runs, and their summaries may still change the default. Opening the default of the moment would show one run's
 * data for the second or two until the summaries are in, then switch to another (issue #30): the panels say
 * "Choosing the run to open…" instead, for at most CHOICE_WAIT_MS after the start.
 */
export function waitForChoice(runs: RunInfo[], urlRun: string | null | undefined, waitedMs: number): boolean {
  if (urlRun && runs.some((r) => r.name === urlRun)) return false;
  return runs.length > 1 && choiceMayChange(runs) && waitedMs < CHOICE_WAIT_MS;
}

/** For a run opened by default: the default now, when it changed (a run's first NaN became known) and nothing has
 * been looked at in the run shown yet; else null. */
export function betterDefault(s: State): string | null {
  if (s.focus !== null || s.alertIndex !== null) return null;
  const best = defaultRun(s.runs.data?.runs ?? []);
  return best !== null && best !== s.run ? best : null;
}

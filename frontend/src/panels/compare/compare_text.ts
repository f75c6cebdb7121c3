/**
 * The comparison's words, one place for the card, Graph Execution's filter and the page title: runs by name with
 * their roles ("baseline" A, "changed" B — role letters collided with runs named A and B), the divergent count split
 * into graph traces and eager executions (Graph Execution's "divergent only" lists the traces), and the headline,
 * which in a health mode is the first change in *counts* and says at once that value changes are not seen.
 */
import type { CompareCounts } from '../../api/wire.ts';

export const ROLE_A = 'baseline';
export const ROLE_B = 'changed';

export function plural(n: number, one: string): string {
  return `${n.toLocaleString('en-US')} ${one}${n === 1 ? '' : 's'}`;
}

/** "226 traces + 5 executions" (a part that is 0 is left out unless both are). */
export function divergentSplit(n: CompareCounts): string {
  const parts = [];
  if (n.divergent_traces || !n.divergent_executions) parts.push(plural(n.divergent_traces, 'trace'));
  if (n.divergent_executions) parts.push(plural(n.divergent_executions, 'execution'));
  return parts.join(' + ');
}

export function isHealthMode(mode: string): boolean {
  return mode.includes('HEALTH') || mode === 'SHAPE';
}

/** The finding's title (document.headline in Python says the same for the CLI and the HTML page). */
export function headline(mode: string, found: boolean): string {
  if (isHealthMode(mode))
    return `${found ? 'First change' : 'No change'} in counts (value changes that keep the counts are not seen)`;
  return found ? 'First divergence' : 'No divergence';
}

/** "baseline run_a": a run by name with its role (never a letter: runs are often named A and B). */
export function asBaseline(name: string | null): string {
  return `${ROLE_A} ${name ?? '?'}`;
}

/** "changed run_b" */
export function asChanged(name: string | null): string {
  return `${ROLE_B} ${name ?? '?'}`;
}

/** "changed run_b vs baseline run_a (FULL_HEALTH)" */
export function runsLine(run: string, base: string, mode: string): string {
  return `${ROLE_B} ${run} vs ${ROLE_A} ${base} (${mode})`;
}

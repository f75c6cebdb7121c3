/**
 * Run B's own views with a comparison on (#27), part of the controller: Graph Execution's pages come from the
 * `compare_rows` route (each row with its difference from run A; "divergent only" is a filter the server pages),
 * and Graph Structure's drawn nodes get their differences from `compare_traces` (only the traces drawn).
 */
import type { Api } from '../api/client.ts';
import type { CompareTolerances, GraphExecutionFilters } from '../api/requests.ts';
import type { ComparedRow } from '../store/compared_rows.ts';
import { idle, loading, type State, type Store } from '../store/store.ts';
import { Latest, settle } from './latest.ts';
import type { PageFetch } from './row_pager.ts';

/** Graph Execution's page fetch while run B (`run`) is compared with `base`: rows carry their difference. */
export function comparedPages(
  api: Api,
  run: string,
  base: string,
  filters: GraphExecutionFilters,
  tol: CompareTolerances,
): PageFetch<ComparedRow> | null {
  const fetchRows = api.compareRows?.bind(api);
  if (!fetchRows) return null;
  return async (begin, end) => {
    const page = await fetchRows(run, base, begin, end, filters, tol);
    const rows = page.rows.map((row, i): ComparedRow => {
      const difference = page.differences[i];
      return difference ? { ...row, difference } : row;
    });
    return { rows, total: page.total, unfilteredTotal: page.unfiltered_total };
  };
}

/** The traces a drawn neighbourhood shows (its nodes' traces of the focused step), in node order. */
export function drawnTraces(s: State): number[] {
  const nodes = s.neighborhood.data?.nodes ?? [];
  return nodes.flatMap((n) => (n.kind === 'op' && n.trace_index !== null ? [n.trace_index] : []));
}

/** Fetches the drawn nodes' differences when the neighbourhood or the comparison changes (newest request wins). */
export class CompareNodesLoader {
  private readonly latest = new Latest();

  constructor(
    private readonly store: Store,
    private readonly api: Api,
  ) {
    store.subscribe((s, prev) => {
      if (s.neighborhood !== prev.neighborhood || s.compare !== prev.compare) void this.refresh();
    });
  }

  async refresh(): Promise<void> {
    const s = this.store.state;
    const live = this.latest.begin();
    const indices = drawnTraces(s);
    const base = s.compareBase;
    const run = s.run;
    if (run === null || base === null || s.compare.status !== 'ready' || !indices.length || !this.api.compareTraces) {
      if (s.compareNodes.status !== 'idle') this.store.set({ compareNodes: idle() });
      return;
    }
    this.store.set({ compareNodes: loading(s.compareNodes) });
    const answer = this.api.compareTraces(run, base, indices, s.compareTolerances);
    await settle(answer, live, (compareNodes) => this.store.set({ compareNodes }));
  }
}

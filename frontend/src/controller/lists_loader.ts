/**
 * The two paged lists' data sets: Alerts (the run's alerts of one type) and Graph Execution (the run's traces under
 * the filters). Part of the controller: it opens a new data set when the run, the type or the filters change, and
 * fetches the pages each list asks for (row_pager.ts) into the store.
 */
import type { Api } from '../api/client.ts';
import type { GraphExecutionFilters } from '../api/requests.ts';
import type { Alert, GraphExecutionRow } from '../api/wire.ts';
import type { PagedRows } from '../store/paged_rows.ts';
import { RowPager } from './row_pager.ts';
import { comparedPages } from './compare_rows.ts';
import { comparing } from '../store/compared_rows.ts';
import { mutesParam } from '../store/mutes.ts';
import type { State, Store } from '../store/store.ts';

/** Rows per request: a screenful or two, well under the server's cap. */
export const LIST_PAGE_SIZE = 200;
/** Op types the filter suggests at most (a datalist of thousands helps nobody). */
export const OP_TYPES_CAP = 500;

/** `known` plus the op types of `rows` not in it yet, up to OP_TYPES_CAP; `known` itself when nothing is new. */
export function withOpTypes(known: string[], rows: readonly GraphExecutionRow[]): string[] {
  let out = known;
  for (const row of rows) {
    if (out.length >= OP_TYPES_CAP) break;
    if (row.op_type && !out.includes(row.op_type)) out = [...out, row.op_type];
  }
  return out;
}

export class ListsLoader {
  readonly alerts: RowPager<Alert>;
  readonly traces: RowPager<GraphExecutionRow>;

  constructor(
    private readonly store: Store,
    private readonly api: Api,
  ) {
    this.alerts = new RowPager<Alert>(
      store,
      { read: (s) => s.alertRows, write: (alertRows) => ({ alertRows }) },
      LIST_PAGE_SIZE,
    );
    this.traces = new RowPager<GraphExecutionRow>(
      store,
      {
        read: (s) => s.geRows,
        write: (geRows, arrived = []) => ({ geRows, opTypes: withOpTypes(this.store.state.opTypes, arrived) }),
      },
      LIST_PAGE_SIZE,
    );
  }

  /** The Alerts list of `type` in `run` (nothing to list without either). */
  openAlerts(run: string | null, type: string | null): PagedRows<Alert> {
    if (run === null || type === null) return this.alerts.open('', null);
    const mutes = mutesParam(this.store.state.mutes);
    return this.alerts.open(JSON.stringify([run, type, mutes ?? null]), async (begin, end) => {
      const page = await this.api.alerts(run, begin, end, type, mutes);
      return { rows: page.alerts, total: page.total };
    });
  }

  /** The Graph Execution list of `run` under `filters`. */
  openTraces(run: string | null, filters: GraphExecutionFilters): PagedRows<GraphExecutionRow> {
    if (run === null) return this.traces.open('', null);
    const base = this.store.state.compareBase; // compared with a baseline run: each row with its difference (#27)
    const tol = this.store.state.compareTolerances;
    const compared =
      base !== null && comparing(this.store.state) ? comparedPages(this.api, run, base, filters, tol) : null;
    if (base !== null && compared) return this.traces.open(JSON.stringify([run, filters, base, tol]), compared);
    return this.traces.open(JSON.stringify([run, filters]), async (begin, end) => {
      const page = await this.api.graphExecutions(run, begin, end, filters);
      return { rows: page.rows, total: page.total, unfilteredTotal: page.unfiltered_total };
    });
  }

  /** Both lists of a newly selected run (the patch joins the run change); `filters`: a permalink's facets. */
  openRun(
    run: string | null,
    alertType: string | null,
    filters: GraphExecutionFilters = {},
  ): Pick<State, 'alertRows' | 'geRows' | 'geFilters'> {
    return { alertRows: this.openAlerts(run, alertType), geRows: this.openTraces(run, filters), geFilters: filters };
  }
}

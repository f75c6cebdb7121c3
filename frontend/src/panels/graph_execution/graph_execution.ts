/**
 * Graph Execution panel: every traced tensor of every graph run, as a virtual list that stays smooth up to 10 M
 * rows (pages of ≤ 1000 fetched as needed). Filters (op type, op name contains, only non-finite), jump to index,
 * keyboard up/down; the focused trace is selected and its op's input rows are tinted.
 */
import type { Controller } from '../../store/controller.ts';
import type { State } from '../../store/store.ts';
import type { GraphExecutionRow, GraphExecutionsResponse } from '../../api/wire.ts';
import type { GraphExecutionFilters } from '../../api/client.ts';
import { PAGE_CAP } from '../../api/client.ts';
import { Panel, el } from '../../widgets/panel.ts';
import { VirtualList } from '../../widgets/virtual_list.ts';
import { dtypeShape, renderHealth } from '../../widgets/health.ts';
import { emptyReason, noRunState } from '../../widgets/notices.ts';
import type { Readiness } from '../../store/ready.ts';

export const ROW_HEIGHT = 24;

const hasFilters = (f: GraphExecutionFilters) => !!(f.opType || f.opName || f.onlyNonfinite);

export class GraphExecutionPanel {
  readonly panel = new Panel('Graph Execution', 'panel-graph-execution');
  readonly list: VirtualList<GraphExecutionRow>;
  private opType = el('input', 'filter-op-type');
  private opName = el('input', 'filter-op-name');
  private nonFinite = el('input', 'filter-nonfinite');
  private jump = el('input', 'jump-index');
  private countEl = el('span', 'ge-count');
  private types = el('datalist');
  private seenTypes = new Set<string>();
  private last: GraphExecutionsResponse | null = null;
  private run: string | null = null;
  private count = -1;
  private pendingScroll: number | null = null;
  private readyPending = false;

  constructor(private readonly ctl: Controller, private readonly readiness: Readiness) {
    this.list = new VirtualList<GraphExecutionRow>({
      rowHeight: ROW_HEIGHT,
      pageSize: Math.min(200, PAGE_CAP),
      testId: 'ge-list',
      fetchPage: (b, e) => this.fetch(b, e),
      renderRow: (row, item, i) => this.renderRow(row, item, i),
      rowClass: (_i, item) => this.rowClass(item),
      onSelect: (_i, item) => item && this.ctl.focusGraphExecution(item.index),
      onActivate: (_i, item) => item && this.ctl.focusGraphExecution(item.index),
      onDraw: () => this.afterDraw(),
    });
    this.buildTools();
    const head = el('div', 'ge-row ge-head');
    for (const t of ['#', 'op name', 'op type', 'slot', 'dtype', 'shape', 'health']) head.append(el('span', '', t));
    this.panel.body.append(head, this.list.element);
    ctl.store.subscribe((s, prev) => this.update(s, prev));
  }

  private buildTools(): void {
    const t = this.panel.tools;
    this.opType.placeholder = 'op type';
    this.opType.dataset.testid = 'filter-op-type';
    this.types.id = 'dbg-op-types';
    this.opType.setAttribute('list', this.types.id);
    this.opName.placeholder = 'op name contains';
    this.opName.dataset.testid = 'filter-op-name';
    this.nonFinite.type = 'checkbox';
    this.nonFinite.dataset.testid = 'filter-nonfinite';
    const nfLabel = el('label', 'filter-nf');
    nfLabel.append(this.nonFinite, document.createTextNode('non-finite only'));
    this.jump.placeholder = 'go to #';
    this.jump.inputMode = 'numeric';
    this.jump.dataset.testid = 'jump-index';
    this.countEl.dataset.testid = 'ge-count';
    let timer: ReturnType<typeof setTimeout> | undefined;
    const apply = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        this.ctl.setFilters({ opType: this.opType.value.trim(), opName: this.opName.value.trim(), onlyNonfinite: this.nonFinite.checked });
      }, 250);
    };
    this.opType.addEventListener('input', apply);
    this.opName.addEventListener('input', apply);
    this.nonFinite.addEventListener('change', apply);
    this.jump.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      const n = Number(this.jump.value.trim());
      if (!Number.isInteger(n) || n < 0) return;
      void this.ctl.focusGraphExecution(n);
    });
    t.append(this.opType, this.types, this.opName, nfLabel, this.jump, this.countEl);
  }

  private fetch(begin: number, end: number) {
    const run = this.run;
    if (run === null) return Promise.resolve({ items: [], total: 0 });
    return this.ctl.api.graphExecutions(run, begin, end, this.ctl.store.state.geFilters).then((r) => {
      if (run === this.run) this.last = r;
      for (const row of r.rows) {
        if (row.op_type && !this.seenTypes.has(row.op_type) && this.seenTypes.size < 500) {
          this.seenTypes.add(row.op_type);
          const o = el('option');
          o.value = row.op_type;
          this.types.append(o);
        }
      }
      return { items: r.rows, total: r.total };
    });
  }

  private renderRow(row: HTMLElement, item: GraphExecutionRow | undefined, i: number): void {
    row.classList.add('ge-row');
    if (!item) {
      const err = this.list.model.pageError(i);
      row.replaceChildren(el('span', 'ge-idx', ''), el('span', 'muted', err ? `error: ${err}` : 'Loading…'));
      return;
    }
    const { dtype, shape } = dtypeShape(item.health);
    const name = el('span', 'ge-op', item.op_name);
    name.title = `${item.op_name} (graph ${item.graph_id})`;
    row.dataset.geIndex = String(item.index);
    row.replaceChildren(
      el('span', 'ge-idx', String(item.index)),
      name,
      el('span', 'ge-type', item.op_type ?? '?'),
      el('span', 'ge-slot', String(item.output_slot)),
      el('span', 'ge-dtype', dtype),
      el('span', 'ge-shape', shape),
      renderHealth(item.health),
    );
  }

  private rowClass(item: GraphExecutionRow | undefined): string | null {
    if (!item) return null;
    const s = this.ctl.store.state;
    if (s.focus?.kind === 'graph_execution' && s.focus.index === item.index) return 'focused';
    if (s.inputRows.includes(item.index)) return 'input-row';
    return null;
  }

  private afterDraw(): void {
    const m = this.list.model;
    const s = this.ctl.store.state;
    if (s.run === null) {
      this.countEl.textContent = '';
      this.panel.setState(noRunState(s));
      return;
    }
    const filtered = hasFilters(s.geFilters);
    const unfiltered = this.last?.unfiltered_total ?? m.total;
    if (!m.loadedOnce) {
      // No count until the new data set answers: a stale or zero count would mislead (and tests would race it).
      this.countEl.textContent = 'counting…';
      this.panel.setState({ kind: 'loading' });
      return;
    }
    this.countEl.textContent = filtered ? `${m.total.toLocaleString('en-US')} of ${unfiltered.toLocaleString('en-US')}` : `${m.total.toLocaleString('en-US')} traces`;
    if (m.lastError && m.total === 0) this.panel.setState({ kind: 'error', text: `Could not load traces: ${m.lastError}` });
    else if (m.total === 0 && filtered) this.panel.setState({ kind: 'empty', text: 'No trace matches the filters.' });
    else if (m.total === 0)
      // An unreadable or missing traces file is the reason, not "no traces" (which would blame the program).
      this.panel.setState(
        emptyReason(this.ctl.store.runInfo(), ['no_graph_executions', 'circular_buffer', 'eager_only', 'still_indexing'], 'This run has no graph execution traces.', ['graph_execution_traces']),
      );
    else this.panel.setState({ kind: 'content' });
    if (this.pendingScroll !== null && m.total > 0) {
      const idx = this.pendingScroll;
      this.pendingScroll = null;
      this.reveal(idx);
    }
    if (this.readyPending) {
      this.readyPending = false;
      this.readiness.end('ge');
    }
  }

  private reveal(globalIndex: number): void {
    const filters = this.ctl.store.state.geFilters;
    if (!hasFilters(filters)) {
      this.list.select(globalIndex, true, true);
      return;
    }
    // Filtered: the list position differs from the global index. Find it among loaded rows, else drop the filters.
    const m = this.list.model;
    for (let p = 0; p < m.total; p++) {
      const item = m.item(p);
      if (item?.index === globalIndex) return this.list.select(p, true, true);
      if (p > 5000) break;
    }
    this.clearFilterInputs();
    this.pendingScroll = globalIndex;
    this.ctl.setFilters({});
  }

  private clearFilterInputs(): void {
    this.opType.value = '';
    this.opName.value = '';
    this.nonFinite.checked = false;
  }

  private update(s: State, prev: State): void {
    const info = this.ctl.store.runInfo();
    const count = info?.counts.graph_executions ?? 0;
    if (s.run !== this.run) {
      this.run = s.run;
      this.count = count;
      this.clearFilterInputs();
      this.last = null;
      if (s.run !== null) {
        this.readiness.begin('ge');
        this.readyPending = true;
      }
      this.list.reset();
    } else if (s.geFilters !== prev.geFilters) {
      this.list.reset();
    } else if (count !== this.count) {
      // The dump grew: refetch in place, keeping scroll position and selection.
      this.count = count;
      this.list.refresh();
    }
    if (s.geScroll !== prev.geScroll && s.geScroll) {
      if (this.list.model.loadedOnce && this.list.model.total > 0) this.reveal(s.geScroll.index);
      else this.pendingScroll = s.geScroll.index;
    }
    // An empty list's reason follows the run's notices (a file that turns unreadable, or readable, between polls).
    const emptyNow = this.list.model.loadedOnce && this.list.model.total === 0;
    if (s.focus !== prev.focus || s.inputRows !== prev.inputRows || ((s.run === null || emptyNow) && s.runs !== prev.runs)) this.list.draw();
  }
}

/**
 * Graph Execution panel: every traced tensor of every graph run, as a virtual list that stays smooth up to 10 M
 * rows (the controller fetches the pages the list shows into the store). Filters (op type, op name contains, only non-finite;
 * device and host facets when the run has several), jump to index, keyboard up/down; the focused trace is selected
 * and its op's input rows are tinted.
 */
import type { Controller } from '../../controller/controller.ts';
import type { State } from '../../store/store.ts';
import type { GraphExecutionRow, NoticeCode } from '../../api/wire.ts';
import { hasFilters } from '../../api/requests.ts';
import { facetOptions } from '../../store/facets.ts';
import { jumpError } from '../../store/focus_math.ts';
import { Panel, el } from '../../widgets/panel.ts';
import { VirtualList } from '../../widgets/virtual_list.ts';
import { dtypeShape, renderHealth } from '../../widgets/health.ts';
import { chipTextWidth } from '../../widgets/chip_fit.ts';
import { emptyReason, noRunState } from '../../widgets/notices.ts';
import type { Readiness } from '../../ready.ts';
import { shortDevice } from '../../widgets/devices.ts';
import { functionKind } from '../../widgets/graph_names.ts';
import { FacetSelect } from './facet_select.ts';
import { comparing, differenceOf } from '../../store/compared_rows.ts';
import { differenceCell, differenceHead, DivergentToggle, nameDifferenceHead } from './difference_column.ts';
import { loopCell } from './loop_iterations.ts';

export const ROW_HEIGHT = 24;
/** The "values" button beside the chips, less its text: padding, border, margin and the chips' gap. */
const VALUES_PAD = 16;

export class GraphExecutionPanel {
  readonly panel = new Panel('Graph Execution', 'panel-graph-execution');
  readonly list: VirtualList<GraphExecutionRow>;
  private opType = el('input', 'filter-op-type');
  private opName = el('input', 'filter-op-name');
  private nonFinite = el('input', 'filter-nonfinite');
  private device: FacetSelect;
  private host: FacetSelect;
  private jump = el('input', 'jump-index');
  private countEl = el('span', 'ge-count');
  /** Why the go-to-# text is not a trace, and what the controller did to the filters on its own. */
  private jumpMsg = el('span', 'ge-jump-error');
  private note = el('div', 'ge-note');
  private types = el('datalist');
  /** The opened tf.function call (the `call` filter), with a button that closes it. */
  private callChip = el('span', 'ge-call');
  /** A list position to reveal once the rows it lies in have arrived (a scroll request made before). */
  private pendingScroll: number | null = null;
  /** The first page of a newly selected run is still to be drawn (readiness). */
  private readyPending = false;
  /** The px the health chips may take in a row (the health column less its "values" button), from a
   * ResizeObserver on the header's cell: rows are fitted while drawn, reading no layout (chip_fit.ts). */
  private chipsWidth: number | null = null;
  /** Characters an op name keeps, and the column's width (watchNameColumn). */
  private nameKeep = NAME_KEEP;
  private nameWidth = 0;
  /** With a comparison on (#27): the difference column's header and the "divergent only" toggle. */
  private diffHead = differenceHead();
  private divergent = new DivergentToggle(() => this.applyFilters());

  constructor(
    private readonly ctl: Controller,
    private readonly readiness: Readiness,
  ) {
    this.list = new VirtualList<GraphExecutionRow>({
      rowHeight: ROW_HEIGHT,
      testId: 'ge-list',
      requestRows: (begin, end) => ctl.loadGraphExecutionRows(begin, end),
      renderRow: (row, item, i) => this.renderRow(row, item, i),
      rowClass: (_i, item) => this.rowClass(item),
      onSelect: (_i, item) => item && this.ctl.focusGraphExecution(item.index),
      onActivate: (_i, item) => item && this.ctl.focusGraphExecution(item.index),
      onDraw: () => this.afterDraw(),
    });
    this.device = new FacetSelect('filter-device', 'any device', () => this.applyFilters());
    this.host = new FacetSelect('filter-host', 'any host', () => this.applyFilters());
    this.buildTools();
    const head = el('div', 'ge-row ge-head');
    // classes: the narrow comparing layout drops the low-value columns (slot, dtype, shape, device) head and rows alike
    for (const t of ['#', 'op name', 'health', 'op type', 'slot', 'dtype', 'shape', 'device'])
      head.append(
        el('span', t === 'op type' ? 'ge-type' : ['slot', 'dtype', 'shape', 'device'].includes(t) ? `ge-${t}` : '', t),
      );
    this.watchHealthColumn(head.children[2] as HTMLElement);
    this.watchNameColumn(head.children[1] as HTMLElement);
    head.children[2]!.after(this.diffHead);
    this.note.dataset.testid = 'ge-note';
    this.note.hidden = true;
    this.jumpMsg.hidden = true;
    this.panel.body.append(this.note, head, this.list.element);
    ctl.store.subscribe((s, prev) => this.update(s, prev));
  }

  private watchHealthColumn(cell: HTMLElement): void {
    if (typeof ResizeObserver === 'undefined') return;
    new ResizeObserver(([entry]) => {
      const width = Math.floor((entry?.contentRect.width ?? 0) - chipTextWidth('values') - VALUES_PAD);
      if (width === this.chipsWidth) return;
      this.chipsWidth = width > 0 ? width : null;
      this.list.draw();
    }).observe(cell);
  }

  /** Op names are cut (in the middle, keeping the last scopes) to what the column holds, not to a fixed length:
   * a CSS cut from the right read "classifier…" on every row of a narrow panel. */
  private watchNameColumn(cell: HTMLElement): void {
    if (typeof ResizeObserver === 'undefined') return;
    new ResizeObserver(([entry]) => {
      const width = entry?.contentRect.width ?? 0;
      const keep = nameChars(width);
      if (keep === this.nameKeep && width === this.nameWidth) return;
      this.nameKeep = keep;
      this.nameWidth = width;
      this.list.draw();
    }).observe(cell);
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
      timer = setTimeout(() => this.applyFilters(), 250);
    };
    this.opType.addEventListener('input', apply);
    this.opName.addEventListener('input', apply);
    this.nonFinite.addEventListener('change', apply);
    this.jumpMsg.dataset.testid = 'jump-error';
    this.jumpMsg.setAttribute('role', 'alert');
    this.jump.addEventListener('input', () => this.showJumpError(null));
    this.jump.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      const err = jumpError(this.jump.value, this.ctl.store.state.geRows.unfilteredTotal);
      this.showJumpError(err);
      if (err === null) void this.ctl.focusGraphExecution(Number(this.jump.value.trim()));
    });
    this.callChip.dataset.testid = 'ge-call';
    this.callChip.hidden = true;
    t.append(this.callChip, this.opType, this.types, this.opName, this.device.element, this.host.element, nfLabel);
    t.append(this.divergent.element);
    t.append(this.jump, this.jumpMsg, this.countEl);
  }

  /** Every filter as the inputs show it (a facet applies at once; typing waits for a pause); an opened call stays
   * open. */
  private applyFilters(): void {
    this.ctl.setFilters({
      ...this.ctl.store.state.geFilters,
      opType: this.opType.value.trim(),
      opName: this.opName.value.trim(),
      onlyNonfinite: this.nonFinite.checked,
      device: this.device.value,
      host: this.host.value,
      divergentOnly: comparing(this.ctl.store.state) && this.divergent.input.checked ? true : undefined,
    });
  }

  private showJumpError(err: string | null): void {
    this.jumpMsg.textContent = err ?? '';
    this.jumpMsg.hidden = err === null;
    this.jump.setAttribute('aria-invalid', String(err !== null));
  }

  private renderRow(row: HTMLElement, item: GraphExecutionRow | undefined, i: number): void {
    row.classList.add('ge-row');
    if (!item) {
      const err = this.list.model.pageError(i);
      row.replaceChildren(el('span', 'ge-idx', ''), el('span', 'muted', err ? `error: ${err}` : 'Loading…'));
      return;
    }
    const { dtype, shape } = dtypeShape(item.health);
    const whole = this.nameWidth > 0 && chipTextWidth(item.op_name) * NAME_FONT <= this.nameWidth;
    const name = el('span', 'ge-op', whole ? item.op_name : shortOpName(item.op_name, this.nameKeep));
    name.title = `${item.op_name}${item.op_type && item.op_type !== item.op_name ? ` (${item.op_type})` : ''}`;
    row.dataset.geIndex = String(item.index);
    // The op type always: a blank cell reads as "no type" (a name equal to its type is common: Log, MatMul).
    const type = el('span', 'ge-type', item.op_type ?? '?');
    type.title = item.op_type ?? 'op not in the graphs file';
    const health = el('span', 'ge-health');
    const values = el('button', 'tv-open-btn', 'values');
    values.dataset.testid = 'ge-values';
    values.tabIndex = -1; // the list is one Tab stop (arrows move inside it)
    values.addEventListener('click', (e) => {
      e.stopPropagation();
      this.ctl.tensors.open({ source: 'graph', index: item.index, output: null });
    });
    health.append(loopCell(item) ?? renderHealth(item.health, undefined, this.chipsWidth), values);
    const device = el('span', 'ge-device', item.device_name ? shortDevice(item.device_name) : '');
    device.title = item.device_name ? `${item.device_name} on ${item.host}` : `no device recorded (host ${item.host})`;
    row.replaceChildren(
      el('span', 'ge-idx', String(item.index)),
      name,
      health,
      ...(this.compared ? [differenceCell(differenceOf(item), this.ctl.store.state.compareBase)] : []),
      type,
      el('span', 'ge-slot', String(item.output_slot)),
      el('span', 'ge-dtype', dtype),
      el('span', 'ge-shape', shape),
      device,
    );
  }

  private rowClass(item: GraphExecutionRow | undefined): string | null {
    if (!item) return null;
    const s = this.ctl.store.state;
    if (s.focus?.kind === 'graph_execution' && s.focus.index === item.index) return 'focused';
    if (s.focus === null && s.previewTrace === item.index) return 'previewed'; // the landing's root cause
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
    const unfiltered = s.geRows.unfilteredTotal;
    if (!m.loadedOnce) {
      // No count until the new data set answers: a stale or zero count would mislead (and tests would race it).
      this.countEl.textContent = 'counting…';
      this.panel.setState({ kind: 'loading' });
      return;
    }
    this.countEl.textContent = filtered
      ? `${m.total.toLocaleString('en-US')} of ${unfiltered.toLocaleString('en-US')}`
      : `${m.total.toLocaleString('en-US')} traces`;
    if (m.lastError && m.total === 0)
      this.panel.setState({ kind: 'error', text: `Could not load traces: ${m.lastError}` });
    else if (m.total === 0 && filtered) this.panel.setState({ kind: 'empty', text: 'No trace matches the filters.' });
    else if (m.total === 0)
      // An unreadable or missing traces file is the reason, not "no traces" (which would blame the program).
      this.panel.setState(emptyReason(this.ctl.store.runInfo(), EXPLANATIONS, NO_TRACES, ['graph_execution_traces']));
    else this.panel.setState({ kind: 'content' });
    if (this.pendingScroll !== null && m.total > 0) {
      const position = this.pendingScroll;
      this.pendingScroll = null;
      this.list.select(position, true, true);
    }
    if (this.readyPending) {
      this.readyPending = false;
      this.readiness.end('ge');
    }
  }

  /** The filter inputs show the store's filters (the controller drops them to show a trace they hide); what the
   * user is typing stays as typed when it means the same. */
  private showFilters(s: State): void {
    const f = s.geFilters;
    if (this.opType.value.trim() !== (f.opType ?? '')) this.opType.value = f.opType ?? '';
    if (this.opName.value.trim() !== (f.opName ?? '')) this.opName.value = f.opName ?? '';
    this.nonFinite.checked = !!f.onlyNonfinite;
    this.divergent.show(comparing(s), !!f.divergentOnly, s.compare.data?.counts);
    this.showCall(s);
    this.showFacets(s);
  }

  /** Whether the rows carry differences from a baseline run: the column and the toggle follow. */
  private get compared(): boolean {
    return comparing(this.ctl.store.state);
  }

  private showComparing(s: State): void {
    const on = comparing(s);
    this.panel.body.classList.toggle('ge-compared', on);
    this.diffHead.hidden = !on;
    nameDifferenceHead(this.diffHead, s.compareBase);
    this.divergent.show(on, !!s.geFilters.divergentOnly, s.compare.data?.counts);
  }

  private showCall(s: State): void {
    const call = s.geFilters.call;
    this.callChip.hidden = call === undefined;
    if (call === undefined) return this.callChip.replaceChildren();
    const info = s.openedCall?.index === call ? s.openedCall : null;
    const name = info ? ` ${info.graph_name || info.op_type}` : '';
    const close = el('button', 'ge-call-close', '✕');
    close.dataset.testid = 'ge-call-close';
    close.title = 'Close this call: list every trace again';
    close.addEventListener('click', () => this.ctl.setFilters({ ...this.ctl.store.state.geFilters, call: undefined }));
    const kind = functionKind(this.ctl.store.runInfo()?.framework);
    this.callChip.title = `Only the traces ${kind} call #${call} wrote${info ? ` (${info.traces} traces)` : ''}`;
    this.callChip.replaceChildren(el('span', '', `call #${call}${name}`), close);
  }

  private showFacets(s: State): void {
    const options = facetOptions(s.devices.data, s.geFilters);
    this.device.show(options.devices, s.geFilters.device);
    this.host.show(options.hosts, s.geFilters.host);
  }

  private showOpTypes(types: string[]): void {
    this.types.replaceChildren(...types.map((t) => Object.assign(el('option'), { value: t })));
  }

  private update(s: State, prev: State): void {
    if (s.run !== prev.run && s.run !== null) {
      this.readiness.begin('ge');
      this.readyPending = true;
    }
    if (s.geFilters !== prev.geFilters || s.openedCall !== prev.openedCall) this.showFilters(s);
    else if (s.devices !== prev.devices) this.showFacets(s);
    if (s.listNote !== prev.listNote) {
      this.note.textContent = s.listNote ?? '';
      this.note.hidden = s.listNote === null;
    }
    if (s.opTypes !== prev.opTypes) this.showOpTypes(s.opTypes);
    if (s.geRows.key !== prev.geRows.key) this.list.reset(s.geRows);
    else if (s.geRows !== prev.geRows) this.list.setSource(s.geRows);
    if (s.geScroll !== prev.geScroll && s.geScroll) {
      if (this.list.model.loadedOnce && this.list.model.total > 0) this.list.select(s.geScroll.position, true, true);
      else this.pendingScroll = s.geScroll.position;
    }
    // An empty list's reason follows the run's notices (a file that turns unreadable, or readable, between polls).
    const emptyNow = this.list.model.loadedOnce && this.list.model.total === 0;
    const reasonMayChange = (s.run === null || emptyNow) && s.runs !== prev.runs;
    const compared = s.compare !== prev.compare; // the difference column comes and goes with a comparison (#27)
    if (compared) this.showComparing(s);
    const previewed = s.previewTrace !== prev.previewTrace;
    // the landing's root cause in view, not selected: the arrows still start from the top (#40 item 10)
    if (previewed && s.previewTrace !== null && s.focus === null && !hasFilters(s.geFilters))
      this.list.scrollToIndex(s.previewTrace);
    if (s.focus !== prev.focus || s.inputRows !== prev.inputRows || reasonMayChange || compared || previewed)
      this.list.draw();
  }
}

const EXPLANATIONS: NoticeCode[] = ['no_graph_executions', 'circular_buffer', 'eager_only', 'still_indexing'];
const NO_TRACES = 'This run has no graph execution traces.';

const NAME_KEEP = 28;
const NAME_MIN = 10;
/** Measured at the chips' 11 px, scaled to the rows' 12 px; the sample's mix of letters, digits, '_' and '/'. */
const NAME_SAMPLE = 'classifier_1/dense_2/MatMul';
const NAME_FONT = 12 / 11;

/** The characters of an op name a column `width` px wide shows whole (two spare: names are wider than the sample
 * where capitals and 'm's gather). */
function nameChars(width: number): number {
  const perChar = (chipTextWidth(NAME_SAMPLE) / NAME_SAMPLE.length) * NAME_FONT;
  return width > 0 ? Math.max(NAME_MIN, Math.floor(width / perChar) - 2) : NAME_KEEP;
}

/** A long scoped op name cut in the middle, keeping its last scopes whole ("sequential/dense_1/MatMul" ->
 * "…/dense_1/MatMul"): Keras names differ at their end, and a name cut from the right read "sequential…" on
 * every row. The full name stays in the title. */
export function shortOpName(name: string, keep = NAME_KEEP): string {
  if (name.length <= keep) return name;
  const parts = name.split('/');
  let kept = parts.pop()!;
  while (parts.length && parts[parts.length - 1]!.length + kept.length + 3 <= keep) kept = `${parts.pop()}/${kept}`;
  if (parts.length && kept.length + 2 <= keep) return `…/${kept}`;
  const half = Math.floor(keep / 2);
  return `${name.slice(0, half - 1)}…${name.slice(-half)}`;
}

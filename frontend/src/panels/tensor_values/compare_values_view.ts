/**
 * Tensor Values while comparing (#27): under the tensor's own grid, the same window of values in run A (the
 * baseline), run B (the run shown) and A − B, side by side — element by element for FULL_TENSOR, with the largest
 * |A − B| of the window named and its cell marked in all three; for the health modes both health rows and the
 * count differences; for SHAPE both shapes and dtypes. A tensor only B holds says "no counterpart in A". It draws
 * `state.compareTensor` (controller/compare_values_loader.ts follows the view's tensor, plane and window).
 */
import type { CompareValuesResponse, HealthDifference, Num, TensorSlice } from '../../api/wire.ts';
import type { Controller } from '../../controller/controller.ts';
import type { State, TensorView } from '../../store/store.ts';
import { indexOf, planeSize, valueAt, type Plane, type Window } from '../../store/tensor_math.ts';
import { renderHealth } from '../../widgets/health.ts';
import { el } from '../../widgets/panel.ts';
import { asBaseline, asChanged, ROLE_A, ROLE_B } from '../compare/compare_text.ts';
import { formatStat, formatValue, shapeText, valueClass, type Value } from './format.ts';

/** Columns of the window drawn per view (three views share the pane's width). */
const MAX_COLS = 24;
const MAX_ROWS = 64;
/** The difference's name: the baseline's value minus the changed run's. */
const DIFF = `${ROLE_A} − ${ROLE_B}`;

const CSS = `
.cv { border-top: 1px solid var(--line); padding: 4px 8px; max-height: 42vh; overflow: auto; }
.cv[hidden] { display: none; }
.cv-head { display: flex; gap: 12px; align-items: baseline; flex-wrap: wrap; margin-bottom: 4px; }
.cv-max { font-family: Menlo, Consolas, monospace; }
.cv-cols { display: flex; gap: 10px; align-items: flex-start; }
.cv-col { flex: 1 1 0; min-width: 0; overflow: auto; }
.cv-table { border-collapse: collapse; font-family: Menlo, Consolas, monospace; font-size: 11px; }
.cv-table th { color: var(--muted); font-weight: normal; padding: 0 4px; text-align: right; background: var(--head); }
.cv-table td { padding: 0 4px; text-align: right; border-bottom: 1px solid var(--line); white-space: nowrap; }
.cv-table td.cv-argmax { outline: 2px solid var(--accent); outline-offset: -2px; background: var(--focus); }
.cv-health td, .cv-health th { text-align: left; }
`;

export class CompareValuesView {
  readonly element = el('section', 'cv');

  constructor(ctl: Controller) {
    this.element.dataset.testid = 'tv-compare';
    this.element.hidden = true;
    ctl.store.subscribe((s, prev) => {
      if (s.compareTensor !== prev.compareTensor || s.tensorView !== prev.tensorView) this.update(s);
    });
  }

  private update(s: State): void {
    const c = s.compareTensor;
    const v = s.tensorView;
    this.element.hidden = c.status === 'idle' || !v;
    if (this.element.hidden || !v) return;
    const style = el('style');
    style.textContent = CSS;
    const head = el('div', 'cv-head');
    head.append(el('b', '', `Compared with ${asBaseline(s.compareBase)}`));
    this.element.replaceChildren(style, head);
    if (c.status === 'error') return void head.append(el('span', 'tv-error', c.error ?? 'failed'));
    const r = c.data;
    if (!r) return void head.append(el('span', 'muted', `Loading the baseline and ${DIFF}…`));
    if (c.status === 'loading') head.append(el('span', 'muted', 'updating…'));
    if (r.metric) head.append(el('span', 'muted', r.metric.summary));
    if (r.note) head.append(el('span', 'cv-note', r.note));
    if (r.status === 'only_in_b') head.dataset.testid = 'tv-compare-only-b';
    this.renderBody(r, v, head);
  }

  private renderBody(r: CompareValuesResponse, v: TensorView, head: HTMLElement): void {
    const cols = el('div', 'cv-cols');
    cols.dataset.testid = 'tv-compare-cols';
    const plane = v.plane;
    const d = r.difference;
    if (d && plane) {
      const max = el('span', 'cv-max', `max |${DIFF}| in this window ${formatStat(d.max_abs)}`);
      max.dataset.testid = 'tv-compare-max';
      max.dataset.value = String(d.max_abs ?? '');
      if (d.argmax) max.append(el('span', 'muted', ` at [${d.argmax.join(', ')}]`));
      if (d.nonfinite) max.append(el('span', 'v-nan', ` · ${d.nonfinite} not finite`));
      head.append(max);
    }
    const diffSlice: TensorSlice | null = d ? { spec: d.spec, shape: d.shape, values: d.values } : null;
    const views: [string, TensorSlice | null | undefined, string][] = [
      [asBaseline(r.base), r.a?.slice, 'a'],
      [asChanged(r.run), r.b.slice, 'b'],
      [DIFF, diffSlice, 'diff'],
    ];
    for (const [label, slice, key] of views) {
      if (key === 'a' && r.status === 'only_in_b') {
        cols.append(column(label, el('div', 'muted', `no counterpart in ${asBaseline(r.base)}`), key));
        continue;
      }
      const side = key === 'a' ? r.a : key === 'b' ? r.b : null;
      let body: HTMLElement;
      if (slice && plane) body = valuesTable(slice, plane, v.window, d?.argmax ?? null, v.summary.data?.shape ?? []);
      else if (key === 'diff') body = healthTable(r.health_difference);
      else body = el('div', '');
      if (side?.health) body.prepend(renderHealth(side.health));
      if (side && !side.has_values && side.shape)
        body.prepend(el('div', 'tv-shape', `${side.dtype ?? '?'} ${shapeText(side.shape)}`));
      cols.append(column(label, body, key));
    }
    this.element.append(cols);
  }
}

function column(label: string, body: HTMLElement, key: string): HTMLElement {
  const col = el('div', 'cv-col');
  col.dataset.testid = `tv-compare-${key}`;
  col.append(el('div', 'tv-label', label), body);
  return col;
}

/** The window's cells of one answered slice (as the grid lays them out), the largest |A − B| marked. */
function valuesTable(
  slice: TensorSlice,
  plane: Plane,
  w: Window,
  argmax: number[] | null,
  shape: number[],
): HTMLElement {
  const { rows, cols } = planeSize(shape, plane);
  const r1 = Math.min(rows, w.r0 + Math.min(w.rows, MAX_ROWS));
  const c1 = Math.min(cols, w.c0 + Math.min(w.cols, MAX_COLS));
  const table = el('table', 'cv-table');
  const head = el('tr');
  head.append(el('th', ''));
  for (let c = w.c0; c < c1; c++) head.append(el('th', '', plane.colAxis === null ? '' : String(c)));
  table.append(head);
  const mark = argmax?.join(',');
  for (let r = w.r0; r < r1; r++) {
    const tr = el('tr');
    tr.append(el('th', '', plane.rowAxis === null ? '' : String(r)));
    for (let c = w.c0; c < c1; c++) {
      const value: Value = valueAt(slice, plane, w, r, c);
      const td = el('td', valueClass(value), formatValue(value));
      const at = indexOf(plane, r, c).join(',');
      td.dataset.index = at;
      if (at === mark) td.classList.add('cv-argmax');
      tr.append(td);
    }
    table.append(tr);
  }
  return table;
}

/** Health modes: each count as A, B and A − B; the other fields that differ as "A → B". */
function healthTable(h: HealthDifference | null): HTMLElement {
  const box = el('div', '');
  if (!h) return box;
  const table = el('table', 'cv-table cv-health');
  table.dataset.testid = 'tv-compare-health';
  const head = el('tr');
  for (const t of ['', ROLE_A, ROLE_B, DIFF]) head.append(el('th', '', t));
  table.append(head);
  for (const [field, triple] of Object.entries(h.counts)) {
    const tr = el('tr');
    tr.append(el('th', '', field));
    for (const x of triple as Num[]) tr.append(el('td', valueClass(x), formatValue(x)));
    table.append(tr);
  }
  box.append(table);
  for (const line of h.changed) box.append(el('div', 'v-nan', line));
  return box;
}

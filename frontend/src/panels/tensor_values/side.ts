/**
 * The Tensor Values view's side column: the heatmap of the shown plane (with its legend), the histogram, the
 * whole-tensor stats, and the non-finite positions (each a button that centres the grid on it) with the per-axis
 * counts. Pure rendering from the store's answers; clicks call the given callbacks.
 */
import type { TensorResponse } from '../../api/wire.ts';
import type { Plane } from '../../store/tensor_math.ts';
import { heatSteps, numeric, planeSize, valueAt } from '../../store/tensor_math.ts';
import { el } from '../../widgets/panel.ts';
import { drawHeatmap, drawHistogram, heatLegend } from '../../widgets/tensor_canvas.ts';
import { formatStat } from './format.ts';

/** The heatmap of `heat` (a strided slice of the plane); a click calls onPick with the plane cell. */
export function renderHeatmap(
  summary: TensorResponse,
  heat: TensorResponse | null,
  plane: Plane,
  onPick: (row: number, col: number) => void,
): HTMLElement {
  const box = el('div', 'tv-section');
  box.append(el('div', 'tv-label', 'Heatmap of the shown plane'));
  const shape = summary.shape ?? [];
  const [sr, sc] = heatSteps(shape, plane);
  const { rows, cols } = planeSize(shape, plane);
  const hr = Math.ceil(rows / sr);
  const hc = Math.ceil(cols / sc);
  const canvas = el('canvas', 'tv-heat');
  canvas.dataset.testid = 'tv-heatmap';
  const min = numeric(summary.stats?.min ?? 0) ?? 0;
  const max = numeric(summary.stats?.max ?? 1) ?? 1;
  const slice = heat?.slice;
  const w = { r0: 0, c0: 0, rows: hr, cols: hc };
  drawHeatmap(canvas, hr, hc, (r, c) => (slice ? numeric(valueAt(slice, plane, w, r, c)) : null), min, max);
  canvas.addEventListener('click', (e) => {
    const rect = canvas.getBoundingClientRect();
    const c = Math.floor(((e.clientX - rect.left) / rect.width) * hc) * sc;
    const r = Math.floor(((e.clientY - rect.top) / rect.height) * hr) * sr;
    onPick(Math.min(rows - 1, r), Math.min(cols - 1, c));
  });
  canvas.title = sr > 1 || sc > 1 ? `every ${sr}th row and ${sc}th column` : 'click: centre the grid here';
  box.append(canvas, heatLegend(formatStat(summary.stats?.min), formatStat(summary.stats?.max)));
  return box;
}

export function renderHistogram(summary: TensorResponse): HTMLElement {
  const box = el('div', 'tv-section');
  const h = summary.histogram;
  box.append(el('div', 'tv-label', 'Histogram of the finite values'));
  if (!h) return box;
  const canvas = el('canvas', 'tv-hist');
  canvas.dataset.testid = 'tv-histogram';
  drawHistogram(canvas, h.counts, 300, 70);
  const axis = el('div', 'tv-hist-axis muted');
  axis.append(el('span', '', formatStat(h.edges[0])), el('span', '', formatStat(h.edges[h.edges.length - 1])));
  const nf = el('div', 'tv-hist-nf');
  nf.append(
    el('span', 'v-nan', `NaN ${h.nan.toLocaleString('en-US')}`),
    el('span', 'v-posinf', ` +∞ ${h.pos_inf.toLocaleString('en-US')}`),
    el('span', 'v-neginf', ` −∞ ${h.neg_inf.toLocaleString('en-US')}`),
  );
  box.append(canvas, axis, nf);
  return box;
}

export function renderStats(summary: TensorResponse): HTMLElement {
  const box = el('div', 'tv-section');
  const s = summary.stats;
  box.append(el('div', 'tv-label', s?.of === 'modulus' ? 'Stats of |z|' : 'Stats'));
  if (!s) return box;
  const table = el('table', 'tv-stats');
  table.dataset.testid = 'tv-stats';
  const cells: [string, string][] = [
    ['count', s.count.toLocaleString('en-US')],
    ['NaN', formatStat(s.nan)],
    ['−∞', formatStat(s.neg_inf)],
    ['+∞', formatStat(s.pos_inf)],
    ['negative', formatStat(s.neg)],
    ['zero', formatStat(s.zero)],
    ['positive', formatStat(s.pos)],
    ['min', formatStat(s.min)],
    ['max', formatStat(s.max)],
    ['mean', formatStat(s.mean)],
    ['std', formatStat(s.std)],
  ];
  for (let i = 0; i < cells.length; i += 2) {
    const tr = el('tr');
    for (const [k, v] of cells.slice(i, i + 2)) tr.append(el('th', '', k), el('td', '', v));
    table.append(tr);
  }
  box.append(table);
  return box;
}

/** Non-finite positions (first 100) as buttons, and which indices of each axis hold them. */
export function renderPositions(summary: TensorResponse, onPick: (pos: number[]) => void): HTMLElement {
  const box = el('div', 'tv-section');
  const nf = summary.nonfinite;
  if (!nf) return box;
  box.append(el('div', 'tv-label', `Non-finite positions: ${nf.total.toLocaleString('en-US')}`));
  const list = el('div', 'tv-positions');
  list.dataset.testid = 'tv-positions';
  for (const pos of nf.positions) {
    const b = el('button', 'tv-pos', `[${pos.join(', ')}]`);
    b.dataset.testid = 'tv-position';
    b.dataset.pos = pos.join(',');
    b.addEventListener('click', () => onPick(pos));
    list.append(b);
  }
  if (nf.truncated) list.append(el('span', 'muted', ` … the first ${nf.positions.length} shown`));
  box.append(list);
  nf.per_axis.forEach((axis, k) => {
    if (!axis || !axis.index.length) return;
    const parts = axis.index.slice(0, 12).map((i, j) => `${i} (${axis.count[j]})`);
    const more = axis.index.length > 12 || axis.truncated ? ' …' : '';
    box.append(el('div', 'tv-axis muted', `axis ${k}: ${parts.join(', ')}${more}`));
  });
  return box;
}

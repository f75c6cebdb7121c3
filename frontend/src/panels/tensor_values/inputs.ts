/**
 * The focused op's inputs, side by side under its output: for each, the latest recorded value before the op ran
 * (dtype, shape, classes, min/max, a small heatmap of its default plane), or why none was recorded. "open" shows
 * that input in the view.
 */
import type { TensorTarget } from '../../api/requests.ts';
import type { InputView } from '../../store/store.ts';
import { defaultPlane, heatSteps, numeric, planeSize, valueAt } from '../../store/tensor_math.ts';
import { el } from '../../widgets/panel.ts';
import { drawHeatmap } from '../../widgets/tensor_canvas.ts';
import { formatStat, shapeText } from './format.ts';

function inputCard(v: InputView, open: (t: TensorTarget) => void): HTMLElement {
  const card = el('div', 'tv-input');
  card.dataset.testid = 'tv-input';
  const head = el('div', 'tv-input-head');
  head.append(el('b', '', v.name));
  if (v.target) {
    const target = v.target;
    const b = el('button', 'tv-open', 'open');
    b.dataset.testid = 'tv-input-open';
    b.addEventListener('click', () => open(target));
    head.append(b);
  }
  card.append(head);
  const r = v.values?.data;
  if (!v.values || !r) {
    const text = v.values?.status === 'loading' ? 'Loading…' : (v.values?.error ?? v.description);
    card.append(el('div', 'muted tv-input-desc', text));
    return card;
  }
  card.append(el('div', 'muted', `${r.dtype ?? '?'} ${shapeText(r.shape)} · ${r.tensor.tensor_debug_mode}`));
  const s = r.stats;
  if (s) {
    const line = el('div', 'tv-input-stats');
    line.append(
      el('span', s.nan ? 'v-nan' : '', `NaN ${formatStat(s.nan)} `),
      el('span', s.pos_inf || s.neg_inf ? 'v-posinf' : '', `∞ ${(s.pos_inf ?? 0) + (s.neg_inf ?? 0)} `),
      el('span', s.zero ? 'v-zero' : '', `zero ${formatStat(s.zero)} `),
      el('span', '', `neg ${formatStat(s.neg)} · min ${formatStat(s.min)} · max ${formatStat(s.max)}`),
    );
    card.append(line);
  }
  if (r.slice && r.shape) {
    const plane = defaultPlane(r.shape);
    const [sr, sc] = heatSteps(r.shape, plane);
    const { rows, cols } = planeSize(r.shape, plane);
    const w = { r0: 0, c0: 0, rows: Math.ceil(rows / sr), cols: Math.ceil(cols / sc) };
    const canvas = el('canvas', 'tv-input-heat');
    const slice = r.slice;
    const min = numeric(s?.min ?? 0) ?? 0;
    const max = numeric(s?.max ?? 1) ?? 1;
    drawHeatmap(canvas, w.rows, w.cols, (rr, cc) => numeric(valueAt(slice, plane, w, rr, cc)), min, max);
    card.append(canvas);
  } else if (r.note) {
    card.append(el('div', 'muted tv-input-desc', r.note));
  }
  return card;
}

export function renderInputs(views: InputView[], status: string, open: (t: TensorTarget) => void): HTMLElement {
  const strip = el('div', 'tv-inputs');
  strip.dataset.testid = 'tv-inputs';
  strip.append(el('div', 'tv-label', 'Inputs of this op (latest values before it ran)'));
  const row = el('div', 'tv-input-row');
  if (status === 'loading') row.append(el('span', 'muted', 'Loading…'));
  else if (!views.length) row.append(el('span', 'muted', 'No data inputs recorded for this op.'));
  for (const v of views) row.append(inputCard(v, open));
  strip.append(row);
  return strip;
}

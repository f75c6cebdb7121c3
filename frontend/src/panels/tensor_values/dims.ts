/**
 * The dims picker of an N-d tensor: which axis runs down the grid and which across, and for every other axis a
 * slider with a number box fixing its index. The inputs report changes; the store decides what is shown.
 */
import type { Plane } from '../../store/tensor_math.ts';
import { el } from '../../widgets/panel.ts';

export interface DimsCallbacks {
  axes(rowAxis: number, colAxis: number | null): void;
  fixed(axis: number, value: number): void;
}

function axisSelect(shape: number[], value: number | null, testId: string, allowNone: boolean): HTMLSelectElement {
  const select = el('select', 'tv-axis-select');
  select.dataset.testid = testId;
  if (allowNone) select.append(new Option('—', ''));
  shape.forEach((d, k) => select.append(new Option(`axis ${k} (${d})`, String(k))));
  select.value = value === null ? '' : String(value);
  return select;
}

export function renderDims(shape: number[], plane: Plane, cb: DimsCallbacks): HTMLElement {
  const box = el('div', 'tv-dims');
  box.dataset.testid = 'tv-dims';
  if (shape.length < 2) return box;
  const rows = axisSelect(shape, plane.rowAxis, 'tv-row-axis', false);
  const cols = axisSelect(shape, plane.colAxis, 'tv-col-axis', true);
  const changed = () => cb.axes(Number(rows.value), cols.value === '' ? null : Number(cols.value));
  rows.addEventListener('change', changed);
  cols.addEventListener('change', changed);
  box.append(el('span', 'muted', 'rows'), rows, el('span', 'muted', 'columns'), cols);
  shape.forEach((d, k) => {
    if (k === plane.rowAxis || k === plane.colAxis) return;
    const value = plane.fixed[k] ?? 0;
    const slider = el('input', 'tv-fixed-range');
    slider.type = 'range';
    slider.min = '0';
    slider.max = String(Math.max(0, d - 1));
    slider.value = String(value);
    const num = el('input', 'tv-fixed-num');
    num.type = 'number';
    num.min = '0';
    num.max = String(Math.max(0, d - 1));
    num.value = String(value);
    num.dataset.testid = `tv-fixed-${k}`;
    slider.addEventListener('change', () => cb.fixed(k, Number(slider.value)));
    slider.addEventListener('input', () => (num.value = slider.value));
    num.addEventListener('change', () => cb.fixed(k, Number(num.value)));
    const label = el('label', 'tv-fixed');
    label.append(el('span', 'muted', `axis ${k} =`), slider, num);
    box.append(label);
  });
  return box;
}

/**
 * A capsule's per-layer history on its card (#36): one row per trainable variable, one column per step up to the
 * trigger (the last column), the colour the log10 of the gradient norm on the shared ramp (NaN/∞ in their own
 * colour: a non-finite norm arrives as null), the variable that left its band first marked by name and at the step
 * where it left ("first out of band: dense_3/kernel, 4 steps before the trigger"). Drawn once per card, one pixel
 * per cell scaled by CSS: 48 rows x 32 steps at most.
 */
import type { CapsuleLayerHistory } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';
import { drawHeatmap, heatLegend } from '../../widgets/tensor_canvas.ts';

const CELL_W = 8; // CSS pixels per step
const CELL_H = 13; // CSS pixels per variable (one line of the names column)

function range(rows: (number | null)[][]): [number, number] {
  let min = Infinity;
  let max = -Infinity;
  for (const row of rows)
    for (const v of row)
      if (v !== null) {
        min = Math.min(min, v);
        max = Math.max(max, v);
      }
  return min <= max ? [min, max] : [0, 1];
}

function power(log10: number): string {
  return `1e${Math.round(log10)}`;
}

export function layerHeatmap(history: CapsuleLayerHistory): HTMLElement {
  const box = el('div', 'capsule-layers');
  box.dataset.testid = 'capsule-layers';
  const text = el('div', history.first ? 'capsule-layers-text capsule-bad' : 'capsule-layers-text');
  text.textContent = `layers: ${history.text}`;
  text.dataset.testid = 'capsule-layers-text';
  box.append(text);
  const rows = history.grad_norm;
  if (!rows.length || !history.steps) return box;
  const first = history.first === null ? -1 : history.variables.indexOf(history.first);
  const grid = el('div', 'capsule-layers-grid');
  const names = el('div', 'capsule-layers-names');
  history.variables.forEach((name, i) => {
    const label = el('div', i === first ? 'capsule-layers-name capsule-layers-first' : 'capsule-layers-name', name);
    label.title = name;
    if (i === first) label.dataset.testid = 'capsule-layers-first';
    names.append(label);
  });
  const plot = el('div', 'capsule-layers-plot');
  const canvas = document.createElement('canvas');
  canvas.dataset.testid = 'capsule-layers-canvas';
  canvas.style.width = `${history.steps * CELL_W}px`;
  canvas.style.height = `${rows.length * CELL_H}px`;
  const [min, max] = range(rows);
  drawHeatmap(canvas, rows.length, history.steps, (r, c) => rows[r]?.[c] ?? Number.NaN, min, max);
  canvas.title = 'log10 of each variable’s gradient norm per step; the last column is the trigger’s step';
  plot.append(canvas);
  if (first >= 0 && history.lead !== null) {
    const mark = el('div', 'capsule-layers-mark');
    mark.dataset.testid = 'capsule-layers-mark';
    mark.style.left = `${(history.steps - 1 - history.lead) * CELL_W - 1}px`;
    mark.style.top = `${first * CELL_H - 1}px`;
    mark.style.width = `${CELL_W + 2}px`;
    mark.style.height = `${CELL_H + 2}px`;
    mark.title = `${history.first} left its band here, ${history.lead} step(s) before the trigger`;
    plot.append(mark);
  }
  const axis = el('div', 'capsule-layers-axis muted');
  axis.append(el('span', '', `−${history.steps - 1}`), el('span', '', 'trigger'));
  plot.append(axis);
  grid.append(names, plot);
  const shown = history.total > rows.length ? `${rows.length} of ${history.total} variables (most out of band)` : '';
  const legend = heatLegend(power(min), power(max));
  legend.prepend(el('span', 'muted', `gradient norm, log scale${shown ? ` · ${shown}` : ''}:`));
  box.append(grid, legend);
  return box;
}

/**
 * The detail pane of one tensor: every fact its debug record holds (dtype, shape, size, each count) and the mode it
 * came from, so a person never has to guess what a chip left out.
 */
import { el } from './panel.ts';
import { healthDetail } from './health.ts';

export function renderTensorDetail(title: string, health: unknown): HTMLElement {
  const box = el('div', 'tensor-detail');
  box.dataset.testid = 'tensor-detail';
  box.append(el('div', 'gs-label', title));
  for (const [k, v] of healthDetail(health)) {
    const row = el('div', 'td-row');
    row.append(el('span', 'td-key', k), document.createTextNode(' '), el('span', 'td-value', v));
    box.append(row);
  }
  return box;
}

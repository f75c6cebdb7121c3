/**
 * Graph Structure with a comparison on (#27): each drawn op gets a ring in its difference status at the focused
 * step — differs (red), equal (green), only in the changed run (grey, dashed), none when not compared — the first divergence's op
 * a thicker ring and a "first Δ" label, and the drawing a legend. The statuses are the server's, for the traces
 * drawn (`compare_traces`, controller/compare_rows.ts); painting them leaves the node's health fill as it was.
 */
import type { TraceDifference } from '../../api/wire.ts';
import type { State } from '../../store/store.ts';
import { el } from '../../widgets/panel.ts';
import { asBaseline, ROLE_A } from '../compare/compare_text.ts';
import { svg, NODE_H, NODE_W } from './drawn_parts.ts';

export interface NodeDifferences {
  byTrace: Map<number, TraceDifference>;
  /** The first divergence's node id (`graph_id:op_name`) in run B, if it is a graph op. */
  firstId: string | null;
}

let madeFrom: unknown = null;
let made: NodeDifferences | null = null;

/** The drawn traces' differences and the first divergence's node, while a comparison is on (else null). */
export function nodeDifferences(s: State): NodeDifferences | null {
  if (s.compareBase === null || s.compare.status !== 'ready') return null;
  const answer = s.compareNodes.data;
  if (madeFrom === answer && made) return made;
  const byTrace = new Map<number, TraceDifference>();
  answer?.indices.forEach((index, i) => {
    const d = answer.differences[i];
    if (d) byTrace.set(index, d);
  });
  const b = s.compare.data?.first_divergence?.b;
  const firstId = b && b.source === 'graph' && b.graph_id && b.op_name ? `${b.graph_id}:${b.op_name}` : null;
  madeFrom = answer;
  made = { byTrace, firstId };
  return made;
}

const STATUSES = ['differs', 'same', 'only_in_b', 'not_compared'] as const;
const WORDS: Record<TraceDifference['status'], string> = {
  differs: 'differs from the baseline',
  same: 'equal to the baseline (within tolerance)',
  only_in_b: 'only in the changed run',
  not_compared: 'not compared',
};

/** Rings every drawn op node of `content` by its difference (or clears them: `d` null). */
export function paintDifferences(content: Element, d: NodeDifferences | null): void {
  for (const node of content.querySelectorAll<SVGGElement>('[data-testid=gs-node]')) {
    node.querySelectorAll('.gs-cmp-ring, .gs-cmp-first-label').forEach((part) => part.remove());
    node.classList.remove('cmp-first', ...STATUSES.map((status) => `cmp-${status}`));
    delete node.dataset.diff;
    delete node.dataset.cmpFirst;
    const trace = node.dataset.trace;
    const difference = d && trace !== undefined ? d.byTrace.get(Number(trace)) : undefined;
    if (!d || !difference) continue;
    node.dataset.diff = difference.status;
    node.classList.add(`cmp-${difference.status}`);
    const ring = svg('rect', { class: 'gs-cmp-ring', x: -3, y: -3, width: NODE_W + 6, height: NODE_H + 6, rx: 6 });
    const tip = svg('title');
    tip.textContent = `${WORDS[difference.status]}${difference.summary ? `: ${difference.summary}` : ''}`;
    ring.append(tip);
    // under the labels: right after the node's own box (the first rect, whose fill the labels are read against)
    const box = node.querySelector(':scope > rect');
    if (box) box.after(ring);
    else node.prepend(ring);
    if (d.firstId !== null && node.dataset.id === d.firstId) {
      node.classList.add('cmp-first');
      node.dataset.cmpFirst = 'true';
      node.append(Object.assign(svg('text', { class: 'gs-cmp-first-label', x: 2, y: -6 }), { textContent: 'first Δ' }));
    }
  }
}

/** The legend's first words name the baseline run compared with. */
export function nameLegend(legend: HTMLElement, base: string | null): void {
  const vs = legend.querySelector('.gs-cmp-vs');
  if (vs) vs.textContent = `vs ${asBaseline(base)} at this step:`;
}

/** The legend of the rings (hidden while no comparison is on). */
export function compareLegend(): HTMLElement {
  const box = el('div', 'gs-cmp-legend');
  box.dataset.testid = 'gs-cmp-legend';
  const vs = el('span', 'gs-cmp-vs', `vs ${ROLE_A} at this step:`);
  vs.dataset.testid = 'gs-cmp-vs';
  box.append(vs);
  for (const status of ['differs', 'same', 'only_in_b'] as const) {
    box.append(el('span', `gs-cmp-swatch cmp-${status}`), WORDS[status]);
  }
  box.append(' · no ring: not compared · thick ring, "first Δ": the first divergence');
  box.hidden = true;
  return box;
}

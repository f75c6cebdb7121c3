/**
 * Graph Structure's drawn mode: the focused op's neighbourhood (route graph_neighborhood) laid out top to bottom by
 * dagre (a kept layout library), as SVG. Nodes are coloured by their health at the focused step (non-finite,
 * contained/expected, finite, no trace), the path from the root cause's producer is outlined, edges that cross a
 * function boundary are dashed. Wheel zooms, dragging pans, a click (or Enter on a focused node) focuses that op.
 */
import dagre from '@dagrejs/dagre';
import type { NeighborhoodNode, NeighborhoodResponse, TensorHealth } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';

const SVG = 'http://www.w3.org/2000/svg';
const NODE_W = 150;
const NODE_H = 38;

export interface DrawnGraphIntents {
  focusOp(graphId: string, opName: string): void;
  focusExecution(index: number): void;
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

/** The health class of a node: what its colour says. */
export function healthClass(n: NeighborhoodNode): string {
  if (n.role === 'contained' || n.role === 'expected') return 'contained';
  const h = n.health;
  if (!h) return n.kind === 'execution' ? 'unknown' : 'untraced';
  if (nonFinite(h)) return 'nonfinite';
  if (h.mode === 'FULL_HEALTH' || h.mode === 'CONCISE_HEALTH' || h.mode === 'CURT_HEALTH' || h.mode === 'FULL_TENSOR')
    return 'finite';
  return 'unknown';
}

function nonFinite(h: TensorHealth): boolean {
  if (h.mode === 'CURT_HEALTH') return h.any_inf_or_nan;
  if ('nan' in h && typeof h.nan === 'number')
    return h.nan > 0 || (h.neg_inf as number) > 0 || (h.pos_inf as number) > 0;
  return false;
}

function label(n: NeighborhoodNode): [string, string] {
  if (n.kind === 'execution')
    return [`${n.op_type}`, `eager call #${n.execution_index ?? '?'} → out ${n.output_slot ?? 0}`];
  const name = n.op_name ?? n.op_type;
  const short = name.length > 22 ? '…' + name.slice(-21) : name;
  const more = n.more_up + n.more_down ? ` · +${n.more_up + n.more_down} more` : '';
  return [short, `${n.op_type}${n.device ? ' · ' + n.device.replace(/^.*device:/, '') : ''}${more}`];
}

/** dagre's layout of the answer: node centres and edge polylines, in graph coordinates. */
export function layout(n: NeighborhoodResponse) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 16, ranksep: 34, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const node of n.nodes) g.setNode(node.id, { width: NODE_W, height: NODE_H });
  n.edges.forEach((e, i) => g.setEdge(e.source, e.target, {}, String(i)));
  dagre.layout(g);
  const graph = g.graph();
  return { g, width: graph.width ?? 0, height: graph.height ?? 0 };
}

export function renderDrawnGraph(n: NeighborhoodResponse, focusId: string, intents: DrawnGraphIntents): HTMLElement {
  const box = el('div', 'gs-drawn');
  box.dataset.testid = 'gs-drawn';
  const { g, width, height } = layout(n);
  const root = svg('svg', { class: 'gs-svg', role: 'group', 'aria-label': `graph around ${n.op_name}` });
  const view = { x: 0, y: 0, w: Math.max(width, 200), h: Math.max(height, 100) };
  const apply = () => root.setAttribute('viewBox', `${view.x} ${view.y} ${view.w} ${view.h}`);
  apply();
  // At 1:1 around the focused op once the drawing has a size (a whole big neighbourhood fitted into a small pane
  // is unreadable); the wheel zooms out to the rest.
  const focus = g.node(focusId);
  const centre = new ResizeObserver(() => {
    const w = root.clientWidth;
    const h = root.clientHeight;
    if (!w || !h || !focus) return;
    centre.disconnect();
    Object.assign(view, { x: focus.x - w / 2, y: focus.y - h / 2, w, h });
    apply();
  });
  centre.observe(root);
  n.edges.forEach((e, i) => {
    const pts = (g.edge({ v: e.source, w: e.target, name: String(i) })?.points ?? []) as { x: number; y: number }[];
    const line = svg('polyline', {
      points: pts.map((p) => `${p.x},${p.y}`).join(' '),
      class: `gs-edge-line${e.cross_graph ? ' cross' : ''}`,
      'marker-end': 'url(#gs-arrow)',
    });
    root.append(line);
  });
  const defs = svg('defs');
  const marker = svg('marker', {
    id: 'gs-arrow',
    viewBox: '0 0 8 8',
    refX: 8,
    refY: 4,
    markerWidth: 6,
    markerHeight: 6,
    orient: 'auto',
  });
  marker.append(svg('path', { d: 'M0,0 L8,4 L0,8 z', class: 'gs-arrowhead' }));
  defs.append(marker);
  root.prepend(defs);
  for (const node of n.nodes) root.append(nodeElement(node, g.node(node.id), node.id === focusId, intents));
  attachPanZoom(root, view, apply);
  const fit = el('button', 'gs-fit', 'Fit');
  fit.dataset.testid = 'gs-fit';
  fit.title = 'Show the whole neighbourhood';
  fit.addEventListener('click', () => {
    centre.disconnect();
    Object.assign(view, { x: 0, y: 0, w: Math.max(width, 200), h: Math.max(height, 100) });
    apply();
  });
  box.append(fit, root, legend(n));
  return box;
}

function nodeElement(
  node: NeighborhoodNode,
  at: { x: number; y: number },
  focused: boolean,
  intents: DrawnGraphIntents,
): SVGGElement {
  const [title, sub] = label(node);
  const cls = `gs-node h-${healthClass(node)}${node.on_path ? ' on-path' : ''}${focused ? ' focused' : ''}`;
  const group = svg('g', {
    class: cls,
    transform: `translate(${at.x - NODE_W / 2},${at.y - NODE_H / 2})`,
    tabindex: 0,
  });
  group.dataset.testid = 'gs-node';
  group.dataset.id = node.id;
  group.dataset.health = healthClass(node);
  group.setAttribute('role', 'button');
  group.setAttribute('aria-label', `${node.op_name ?? node.op_type} (${node.op_type}), ${healthClass(node)}`);
  const tip = svg('title');
  tip.textContent = `${node.op_name ?? ''} ${node.op_type}${node.link ? '\n' + node.link : ''}${node.role ? '\nrole: ' + node.role : ''}`;
  group.append(
    tip,
    svg('rect', { width: NODE_W, height: NODE_H, rx: 4 }),
    Object.assign(svg('text', { x: 6, y: 15, class: 'gs-node-name' }), { textContent: title }),
    Object.assign(svg('text', { x: 6, y: 30, class: 'gs-node-sub' }), { textContent: sub }),
  );
  const activate = () => {
    if (node.kind === 'execution' && node.execution_index !== undefined) intents.focusExecution(node.execution_index);
    else if (node.graph_id && node.op_name) intents.focusOp(node.graph_id, node.op_name);
  };
  group.addEventListener('click', activate);
  group.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      activate();
    }
  });
  return group;
}

function attachPanZoom(root: SVGSVGElement, view: { x: number; y: number; w: number; h: number }, apply: () => void) {
  root.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      const k = e.deltaY > 0 ? 1.15 : 1 / 1.15;
      const rect = root.getBoundingClientRect();
      const fx = rect.width ? (e.clientX - rect.left) / rect.width : 0.5;
      const fy = rect.height ? (e.clientY - rect.top) / rect.height : 0.5;
      view.x += view.w * fx * (1 - k);
      view.y += view.h * fy * (1 - k);
      view.w *= k;
      view.h *= k;
      apply();
    },
    { passive: false },
  );
  let drag: { x: number; y: number } | null = null;
  root.addEventListener('pointerdown', (e) => {
    if ((e.target as Element).closest('.gs-node')) return;
    drag = { x: e.clientX, y: e.clientY };
  });
  root.addEventListener('pointermove', (e) => {
    if (!drag) return;
    const rect = root.getBoundingClientRect();
    view.x -= ((e.clientX - drag.x) * view.w) / Math.max(rect.width, 1);
    view.y -= ((e.clientY - drag.y) * view.h) / Math.max(rect.height, 1);
    drag = { x: e.clientX, y: e.clientY };
    apply();
  });
  const end = () => (drag = null);
  root.addEventListener('pointerup', end);
  root.addEventListener('pointerleave', end);
}

function legend(n: NeighborhoodResponse): HTMLElement {
  const box = el('div', 'gs-legend muted');
  for (const [cls, text] of [
    ['nonfinite', 'NaN/∞'],
    ['finite', 'finite'],
    ['contained', 'contained'],
    ['untraced', 'no trace'],
  ] as const) {
    const item = el('span', `gs-legend-item h-${cls}`, text);
    box.append(item);
  }
  box.append(el('span', '', ' · outlined: path from the root cause · dashed: crosses a function boundary'));
  const notes = el(
    'div',
    'gs-notes',
    [...n.notes, n.truncated ? `Only the first ${n.nodes.length} ops are drawn.` : ''].join(' '),
  );
  notes.dataset.testid = 'gs-notes';
  box.append(notes);
  return box;
}

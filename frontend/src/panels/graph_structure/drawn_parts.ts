/**
 * The SVG pieces of the drawn graph (drawn_graph.ts places them where the layout says): an op, a collapsed scope,
 * an expanded scope's box with its header, an edge, the device badge, the legend. Each interactive piece is a
 * focusable role=button that answers Enter and Space as it answers a click.
 */
import type { NeighborhoodNode, NeighborhoodResponse } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';
import type { Box } from './layout.ts';
import { healthClass, type CollapsedGroup, type DrawnEdge, type ScopeGroup } from './scopes.ts';
import { DEVICE_FONT, fitLabel, measureText, NAME_FONT, SCOPE_FONT, SUB_FONT, withinScope } from './label_fit.ts';

const SVG = 'http://www.w3.org/2000/svg';
export const NODE_W = 150;
export const NODE_H = 38;
/** The band at the top of a scope's box that holds its header (dagre leaves ~17 px above a cluster's first rank). */
const HEAD_H = 15;
/** A node's text inset from its left edge and the room kept right of it. */
const PAD = 6;

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

function text(cls: string, x: number, y: number, content: string): SVGTextElement {
  return Object.assign(svg('text', { x, y, class: cls }), { textContent: content });
}

/** Click, Enter and Space do the same thing. */
function asButton(node: SVGGElement, label: string, action: () => void): void {
  node.setAttribute('tabindex', '0');
  node.setAttribute('role', 'button');
  node.setAttribute('aria-label', label);
  node.addEventListener('click', action);
  node.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      action();
    }
  });
}

/** `/job:localhost/replica:0/task:0/device:CPU:0` -> `CPU:0`. */
export function shortDevice(device: string): string {
  const m = /device:([^/]+)$/.exec(device);
  return m ? m[1]! : (device.split('/').at(-1) ?? device);
}

/**
 * Which nodes carry a device badge: every node with a device when the drawing spans more than one, else those whose
 * device differs from the focused op's (with one device everywhere a badge on each node says nothing). An op with
 * no trace has no device: then the drawing's most common device is the one not marked.
 */
export function deviceBadges(nodes: NeighborhoodNode[], focusId: string): (node: NeighborhoodNode) => boolean {
  const counts = new Map<string, number>();
  for (const n of nodes) if (n.device) counts.set(n.device, (counts.get(n.device) ?? 0) + 1);
  const common = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  const reference = nodes.find((n) => n.id === focusId)?.device ?? common;
  return (n) => !!n.device && (counts.size > 1 || n.device !== reference);
}

const badgeWidth = (device: string) => Math.ceil(measureText(shortDevice(device), DEVICE_FONT)) + 6;

function badge(device: string): SVGGElement {
  const short = shortDevice(device);
  const w = badgeWidth(device);
  const g = svg('g', { class: 'gs-device', transform: `translate(${NODE_W - w - 2},2)` });
  g.dataset.testid = 'gs-device';
  const tip = svg('title');
  tip.textContent = device;
  g.append(tip, svg('rect', { width: w, height: 13, rx: 2 }), text('gs-device-text', 3, 10, short));
  return g;
}

/** The node's two lines, cut to the node's width (the name to what the device badge leaves). `scope`: the path of
 * the scope box it is drawn in (its name is shown without it). */
function opLabel(n: NeighborhoodNode, scope: string | null, badged: boolean): [string, string] {
  const nameRoom = NODE_W - 2 * PAD - (badged && n.device ? badgeWidth(n.device) + 4 : 0);
  const subRoom = NODE_W - 2 * PAD;
  if (n.kind === 'execution')
    return [
      fitLabel(n.op_type, nameRoom, NAME_FONT, measureText, 'start'),
      fitLabel(
        `eager call #${n.execution_index ?? '?'} → out ${n.output_slot ?? 0}`,
        subRoom,
        SUB_FONT,
        measureText,
        'start',
      ),
    ];
  const name = withinScope(n.op_name ?? n.op_type, scope);
  const more = n.more_up + n.more_down ? ` · +${n.more_up + n.more_down} more` : '';
  const type = fitLabel(n.op_type, subRoom - measureText(more, SUB_FONT), SUB_FONT, measureText, 'start');
  return [fitLabel(name, nameRoom, NAME_FONT, measureText, 'end'), `${type}${more}`];
}

const topLeft = (at: Box) => `translate(${at.x - at.width / 2},${at.y - at.height / 2})`;

export function opNode(
  node: NeighborhoodNode,
  at: Box,
  opts: { focused: boolean; badge: boolean; activate: () => void; scope: string | null },
): SVGGElement {
  const [title, sub] = opLabel(node, opts.scope, opts.badge);
  const health = healthClass(node);
  const group = svg('g', {
    class: `gs-node h-${health}${node.on_path ? ' on-path' : ''}${opts.focused ? ' focused' : ''}`,
    transform: topLeft(at),
  });
  group.dataset.testid = 'gs-node';
  group.dataset.id = node.id;
  group.dataset.health = health;
  if (node.trace_index !== null) group.dataset.trace = String(node.trace_index);
  if (node.device) group.dataset.device = node.device;
  asButton(group, `${node.op_name ?? node.op_type} (${node.op_type}), ${health}`, opts.activate);
  const tip = svg('title');
  tip.textContent =
    `${node.op_name ?? ''} ${node.op_type}${node.device ? '\non ' + node.device : ''}` +
    `${node.link ? '\n' + node.link : ''}${node.role ? '\nrole: ' + node.role : ''}`;
  group.append(
    tip,
    svg('rect', { width: NODE_W, height: NODE_H, rx: 4 }),
    text('gs-node-name', PAD, 15, title),
    text('gs-node-sub', PAD, 30, sub),
  );
  if (opts.badge && node.device) group.append(badge(node.device));
  return group;
}

/** A collapsed scope: one node with the scope's name, its op count and the worst health inside; a click opens it. */
export function collapsedNode(c: CollapsedGroup, at: Box, expand: () => void): SVGGElement {
  const g = svg('g', {
    class: `gs-node gs-group-node h-${c.health}${c.onPath ? ' on-path' : ''}`,
    transform: topLeft(at),
  });
  g.dataset.testid = 'gs-group-node';
  g.dataset.id = c.group.id;
  g.dataset.scope = c.group.path;
  g.dataset.count = String(c.count);
  g.dataset.health = c.health;
  g.setAttribute('aria-expanded', 'false');
  const bad = c.nonfinite ? ` · NaN/∞ in ${c.nonfinite}` : '';
  asButton(g, `scope ${c.group.path}, ${c.count} ops, ${c.health}${bad}: expand`, expand);
  const tip = svg('title');
  tip.textContent = `${c.group.path} (${c.count} ops${bad})${c.devices.length ? '\non ' + c.devices.join(', ') : ''}`;
  const label = fitLabel(c.group.label, NODE_W - 2 * PAD - measureText('▸ ', NAME_FONT), NAME_FONT, measureText, 'end');
  g.append(
    tip,
    // a second outline behind the node's own: a stack of ops
    svg('rect', { class: 'gs-group-stack', x: 3, y: -3, width: NODE_W, height: NODE_H, rx: 4 }),
    svg('rect', { width: NODE_W, height: NODE_H, rx: 4 }),
    text('gs-node-name', 6, 15, `▸ ${label}`),
    text('gs-node-sub', 6, 30, `${c.count} ops${bad}`),
  );
  return g;
}

/** An expanded scope: a labelled box around its ops; its header collapses it. */
export function scopeBox(group: ScopeGroup, at: Box, collapse: () => void): SVGGElement {
  const g = svg('g', { class: 'gs-group', transform: topLeft(at) });
  g.dataset.testid = 'gs-group';
  g.dataset.id = group.id;
  g.dataset.scope = group.path;
  g.dataset.count = String(group.members.length);
  const head = svg('g', { class: 'gs-group-head' });
  head.dataset.testid = 'gs-group-head';
  head.setAttribute('aria-expanded', 'true');
  asButton(head, `scope ${group.path}, ${group.members.length} ops: collapse`, collapse);
  const tip = svg('title');
  tip.textContent = `${group.path}: ${group.members.length} ops (click to collapse)`;
  const count = ` · ${group.members.length}`;
  const room = at.width - 10 - measureText(`▾ ${count}`, SCOPE_FONT);
  const label = `▾ ${fitLabel(group.label, room, SCOPE_FONT, measureText, 'end')}${count}`;
  head.append(tip, svg('rect', { width: at.width, height: HEAD_H, rx: 4 }), text('gs-group-label', 5, 11, label));
  g.append(svg('rect', { class: 'gs-group-box', width: at.width, height: at.height, rx: 5 }), head);
  return g;
}

export function edgeLine(e: DrawnEdge, points: { x: number; y: number }[]): SVGGElement {
  const g = svg('g', { class: 'gs-edge' });
  const line = svg('polyline', {
    points: points.map((p) => `${p.x},${p.y}`).join(' '),
    class: `gs-edge-line${e.cross ? ' cross' : ''}`,
    'marker-end': 'url(#gs-arrow)',
  });
  line.dataset.source = e.source;
  line.dataset.target = e.target;
  line.dataset.count = String(e.count);
  g.append(line);
  const mid = points[points.length >> 1];
  if (e.count > 1 && mid) g.append(text('gs-edge-count', mid.x + 3, mid.y - 2, `×${e.count}`));
  return g;
}

export function arrowDefs(): SVGDefsElement {
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
  return defs;
}

export function legend(n: NeighborhoodResponse, scoped: boolean): HTMLElement {
  const box = el('div', 'gs-legend muted');
  for (const [cls, label] of [
    ['nonfinite', 'NaN/∞'],
    ['finite', 'finite'],
    ['contained', 'contained'],
    ['untraced', 'no trace'],
  ] as const) {
    box.append(el('span', `gs-legend-item h-${cls}`, label));
  }
  box.append(el('span', '', ' · outlined: path from the root cause · dashed: crosses a function boundary'));
  if (scoped) box.append(el('span', '', ' · boxes: name scopes (a header collapses one, a ▸ node opens it)'));
  const notes = el(
    'div',
    'gs-notes',
    [...n.notes, n.truncated ? `Only the first ${n.nodes.length} ops are drawn.` : ''].join(' '),
  );
  notes.dataset.testid = 'gs-notes';
  box.append(notes);
  return box;
}

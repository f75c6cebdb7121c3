/**
 * Graph Structure's drawn mode: the focused op's neighbourhood (route graph_neighborhood) laid out top to bottom by
 * dagre in a Web Worker (layout_client.ts), as SVG. Nodes are coloured by their health at the focused step
 * (non-finite, contained/expected, finite, no trace), the path from the root cause's producer is outlined, edges
 * that cross a function boundary are dashed, a device badge marks ops on another device. Ops are grouped in
 * boxes by name scope (scopes.ts); a box's header collapses it into one node, which a click expands again.
 * Wheel zooms, dragging pans, a click (or Enter on a focused node) focuses that op.
 */
import type { NeighborhoodResponse } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';
import {
  arrowDefs,
  collapsedNode,
  deviceBadges,
  edgeLine,
  legend,
  NODE_H,
  NODE_W,
  opNode,
  scopeBox,
  svg,
} from './drawn_parts.ts';
import type { LayoutRequest, LayoutResult } from './layout.ts';
import type { LayoutClient } from './layout_client.ts';
import { collapsedGroups, defaultCollapsed, drawnGraph, scopeTree, type DrawnGraph, type ScopeTree } from './scopes.ts';

export { healthClass } from './scopes.ts';

export interface DrawnGraphIntents {
  focusOp(graphId: string, opName: string): void;
  focusExecution(index: number): void;
}

type View = { x: number; y: number; w: number; h: number };

/** The smallest zoom: the drawing's 10 px labels are never drawn below 9 px (past it, Fit and the wheel stop, and
 * the rest of a big neighbourhood is reached by panning or in the maximised panel). */
export const MIN_SCALE = 0.9;

/** The viewBox of an svg of `size` px centred on (cx, cy) at `scale` screen px per drawing unit. */
function viewAt(cx: number, cy: number, size: { w: number; h: number }, scale: number): View {
  const w = size.w / scale;
  const h = size.h / scale;
  return { x: cx - w / 2, y: cy - h / 2, w, h };
}

/** What dagre is asked: the drawn items (leaves), the expanded scopes (clusters) and the merged edges. */
export function layoutRequest(d: DrawnGraph): LayoutRequest {
  return {
    nodes: d.items.map((i) => ({ id: i.id, width: NODE_W, height: NODE_H, ...(i.parent ? { parent: i.parent } : {}) })),
    clusters: d.boxes.map((b) => ({ id: b.id, ...(b.parent ? { parent: b.parent } : {}) })),
    edges: d.edges.map((e) => ({ id: e.id, source: e.source, target: e.target })),
  };
}

/**
 * One neighbourhood's drawing. `choices` (scope id -> collapsed) is the panel's, kept per neighbourhood, so a
 * re-render of the same neighbourhood (a poll's new answer) opens with the scopes the user left open or closed.
 */
export class DrawnGraphView {
  readonly element = el('div', 'gs-drawn');
  private readonly root = svg('svg', { class: 'gs-svg', role: 'group' });
  private readonly content = svg('g', { class: 'gs-content' });
  private readonly status = el('div', 'gs-layout-status', 'laying out…');
  private readonly panHint = el(
    'div',
    'gs-pan-hint',
    'Zoomed out as far as labels stay readable: drag to pan, or ⤢ Maximise',
  );
  /** The svg's size in px, from a ResizeObserver (the maximised panel resizes it: the scale and centre stay). */
  private size = { w: 0, h: 0 };
  private readonly tree: ScopeTree;
  private readonly defaults: Set<string>;
  private readonly badged: ReturnType<typeof deviceBadges>;
  private view: View = { x: 0, y: 0, w: 200, h: 100 };
  private extent = { w: 200, h: 100 };
  private placed: LayoutResult | null = null;
  /** Centre on the focused op at 1:1 after the first layout, once the drawing has a size. */
  private centred = false;
  /** Marks laid over the drawn nodes after each draw (a comparison's rings, compare_paint.ts). */
  private paint: ((content: SVGGElement) => void) | null = null;

  constructor(
    private readonly n: NeighborhoodResponse,
    private readonly focusId: string,
    private readonly choices: Map<string, boolean>,
    private readonly intents: DrawnGraphIntents,
    private readonly layouts: LayoutClient,
  ) {
    this.element.dataset.testid = 'gs-drawn';
    this.root.setAttribute('aria-label', `graph around ${n.op_name}`);
    this.tree = scopeTree(n.nodes);
    this.defaults = defaultCollapsed(this.tree, n.nodes, focusId);
    this.badged = deviceBadges(n.nodes, focusId);
    this.root.append(arrowDefs(), this.content);
    attachPanZoom(this.root, this.view, () => this.apply());
    this.panHint.dataset.testid = 'gs-pan-hint';
    this.panHint.hidden = true;
    this.element.append(this.tools(), this.status, this.panHint, this.root, legend(n, this.tree.groups.length > 0));
    new ResizeObserver(() => this.resized()).observe(this.root);
    this.element.dataset.groups = String(this.tree.groups.length);
    this.relayout(null);
  }

  private tools(): HTMLElement {
    const box = el('div', 'gs-drawn-tools');
    const button = (cls: string, label: string, title: string, action: () => void) => {
      const b = el('button', cls, label);
      b.dataset.testid = cls;
      b.title = title;
      b.addEventListener('click', action);
      box.append(b);
    };
    if (this.tree.groups.length) {
      button('gs-expand-all', 'Expand all', 'Open every name scope', () => this.setAll(false));
      button('gs-collapse-all', 'Collapse all', 'Close every name scope', () => this.setAll(true));
    }
    button('gs-fit', 'Fit', 'Show the whole neighbourhood (as far as its labels stay readable)', () => this.fit());
    return box;
  }

  /** The whole drawing, or, where it would need labels below MIN_SCALE, the part around the focused op at it. */
  private fit(): void {
    this.centred = true;
    const { w, h } = this.size;
    const whole = w && h ? Math.min(w / this.extent.w, h / this.extent.h) : 1;
    if (!w || !h || whole >= MIN_SCALE) {
      Object.assign(this.view, { x: 0, y: 0, ...this.extent });
      this.panHint.hidden = true;
    } else {
      const at = this.placed?.boxes[this.focusId];
      const [cx, cy] = at ? [at.x, at.y] : [this.extent.w / 2, this.extent.h / 2];
      Object.assign(this.view, viewAt(cx, cy, this.size, MIN_SCALE));
      this.panHint.hidden = false;
    }
    this.apply();
  }

  /** The svg changed size: the same scale and centre in the new size. */
  private resized(): void {
    const w = this.root.clientWidth;
    const h = this.root.clientHeight;
    const old = this.size;
    this.size = { w, h };
    if (!w || !h || !old.w || !old.h || !this.centred) return;
    const scale = Math.min(old.w / this.view.w, old.h / this.view.h);
    Object.assign(this.view, viewAt(this.view.x + this.view.w / 2, this.view.y + this.view.h / 2, this.size, scale));
    this.apply();
  }

  private setAll(collapsed: boolean): void {
    for (const g of this.tree.groups) this.choices.set(g.id, collapsed);
    this.relayout(null);
  }

  private toggle(groupId: string, collapsed: boolean): void {
    this.choices.set(groupId, collapsed);
    this.relayout(groupId);
  }

  /** Lays out what is drawn now; `anchor` (a scope just toggled) keeps its place on screen across the change. */
  private relayout(anchor: string | null): void {
    const drawn = drawnGraph(this.n, this.tree, collapsedGroups(this.defaults, this.choices));
    this.element.dataset.layout = 'pending';
    this.status.hidden = false;
    const before = anchor ? this.placed?.boxes[anchor] : undefined;
    this.layouts.layout(layoutRequest(drawn)).then(
      (placed) => {
        if (!placed) return; // a newer layout was asked for
        this.element.dataset.layout = placed.where;
        this.element.dataset.layoutMs = placed.result.ms.toFixed(1);
        this.status.hidden = true;
        const after = anchor ? placed.result.boxes[anchor] : undefined;
        if (before && after) {
          this.view.x += after.x - before.x;
          this.view.y += after.y - before.y;
        }
        this.draw(drawn, placed.result);
      },
      (e: unknown) => {
        this.element.dataset.layout = 'error';
        this.status.textContent = `Could not lay the graph out: ${String(e)}`;
      },
    );
  }

  private draw(d: DrawnGraph, r: LayoutResult): void {
    this.placed = r;
    this.extent = { w: Math.max(r.width, 200), h: Math.max(r.height, 100) };
    const parts: SVGElement[] = [];
    for (const b of d.boxes) parts.push(scopeBox(b, r.boxes[b.id]!, () => this.toggle(b.id, true)));
    for (const e of d.edges) parts.push(edgeLine(e, r.edges[e.id] ?? []));
    for (const item of d.items) {
      const at = r.boxes[item.id]!;
      if (item.kind === 'group') {
        parts.push(collapsedNode(item.collapsed, at, () => this.toggle(item.id, false)));
        continue;
      }
      const node = item.node;
      const activate = () => {
        if (node.kind === 'execution' && node.execution_index !== undefined)
          this.intents.focusExecution(node.execution_index);
        else if (node.graph_id && node.op_name) this.intents.focusOp(node.graph_id, node.op_name);
      };
      const scope = item.parent ? (this.tree.byId.get(item.parent)?.path ?? null) : null;
      parts.push(opNode(node, at, { focused: node.id === this.focusId, badge: this.badged(node), activate, scope }));
    }
    // keyboard focus survives a toggle: the header or node that was focused has the same id after it
    const focused = (document.activeElement as Element | null)?.closest?.('[data-id]')?.getAttribute('data-id');
    this.content.replaceChildren(...parts);
    const again = focused ? this.content.querySelector<SVGGElement>(`[data-id="${CSS.escape(focused)}"]`) : null;
    // a scope's box is not focusable itself: its header is
    (again?.matches('[tabindex]') ? again : again?.querySelector<SVGGElement>('[tabindex]'))?.focus();
    if (!this.centred) this.centreOnFocus(d);
    this.paint?.(this.content);
    this.apply();
  }

  /** Lays `paint` over the nodes now and after every later draw (a scope opened or closed redraws them). */
  overlay(paint: (content: SVGGElement) => void): void {
    this.paint = paint;
    paint(this.content);
  }

  /** 1:1 around the focused op (or the closed scope holding it): a big neighbourhood fitted into a small pane is
   * unreadable; the wheel zooms out to the rest. Before the pane has a size, the whole drawing. */
  private centreOnFocus(d: DrawnGraph): void {
    const holder = d.items.find((i) => i.id === this.focusId)
      ? this.focusId
      : d.items.find((i) => i.kind === 'group' && i.collapsed.group.members.includes(this.focusId))?.id;
    const at = holder ? this.placed?.boxes[holder] : undefined;
    Object.assign(this.view, { x: 0, y: 0, ...this.extent });
    const place = () => {
      const w = this.root.clientWidth;
      const h = this.root.clientHeight;
      if (!w || !h || !at) return false;
      Object.assign(this.view, { x: at.x - w / 2, y: at.y - h / 2, w, h });
      this.apply();
      return true;
    };
    if (place()) {
      this.centred = true;
      return;
    }
    const wait = new ResizeObserver(() => {
      if (this.centred || place()) {
        this.centred = true;
        wait.disconnect();
      }
    });
    wait.observe(this.root);
  }

  private apply(): void {
    this.root.setAttribute('viewBox', `${this.view.x} ${this.view.y} ${this.view.w} ${this.view.h}`);
  }
}

function attachPanZoom(root: SVGSVGElement, view: View, apply: () => void) {
  root.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      const rect = root.getBoundingClientRect();
      // zooming out stops where the labels would go below MIN_SCALE ("meet": the smaller ratio is the scale)
      const most = Math.min(rect.width / MIN_SCALE / view.w, rect.height / MIN_SCALE / view.h);
      const k = e.deltaY > 0 ? Math.max(1, Math.min(1.15, most)) : 1 / 1.15;
      if (k === 1) return;
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
    if ((e.target as Element).closest('.gs-node, .gs-group-head')) return;
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

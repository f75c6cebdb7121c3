/**
 * The drawn graph's layout by dagre (a kept library), as a pure function of plain data: the same code runs in the
 * layout worker (layout_worker.ts, the usual path) and, only where a Worker cannot be made, on the page's thread
 * (layout_client.ts). Plain objects in and out, so the request and the answer cross postMessage as they are.
 */
import dagre from '@dagrejs/dagre';

export interface LayoutRequest {
  /** Leaves: ops, eager calls and collapsed scopes; `parent` is the expanded scope box that holds them. */
  nodes: { id: string; width: number; height: number; parent?: string }[];
  /** Expanded scope boxes (dagre's compound nodes), outermost first; dagre sizes them around their children. */
  clusters: { id: string; parent?: string }[];
  edges: { id: string; source: string; target: string }[];
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LayoutResult {
  /** Centres and sizes of leaves and clusters, in graph coordinates. */
  boxes: Record<string, Box>;
  /** Each edge's polyline. */
  edges: Record<string, { x: number; y: number }[]>;
  width: number;
  height: number;
  /** How long dagre took (where it ran). */
  ms: number;
}

/**
 * Up to this many leaves, scopes are laid out as dagre's compound clusters. Above it they are not: dagre's
 * compound ordering grows far faster than its flat one (a real dense 300-op neighbourhood with 55 open scopes ran
 * for over 10 minutes, flat in ~5 s), so the ops are laid out flat and each open scope's box is drawn around
 * where its ops landed (boxes may then overlap; the scopes the panel opens by default keep it under the cap).
 */
export const COMPOUND_MAX = 100;

export function computeLayout(req: LayoutRequest): LayoutResult {
  const start = performance.now();
  const compound = req.clusters.length > 0 && req.nodes.length <= COMPOUND_MAX;
  const g = new dagre.graphlib.Graph({ multigraph: true, compound });
  g.setGraph({ rankdir: 'TB', nodesep: 16, ranksep: 34, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  if (compound) for (const c of req.clusters) g.setNode(c.id, {});
  if (compound) for (const c of req.clusters) if (c.parent) g.setParent(c.id, c.parent);
  for (const n of req.nodes) {
    g.setNode(n.id, { width: n.width, height: n.height });
    if (compound && n.parent) g.setParent(n.id, n.parent);
  }
  for (const e of req.edges) g.setEdge(e.source, e.target, {}, e.id);
  dagre.layout(g);
  const boxes: Record<string, Box> = {};
  for (const id of g.nodes()) {
    const { x, y, width, height } = g.node(id);
    boxes[id] = { x, y, width, height };
  }
  const edges: LayoutResult['edges'] = {};
  for (const e of req.edges) {
    const pts = (g.edge({ v: e.source, w: e.target, name: e.id })?.points ?? []) as { x: number; y: number }[];
    edges[e.id] = pts.map((p) => ({ x: p.x, y: p.y }));
  }
  if (!compound) boundClusters(req, boxes);
  const graph = g.graph();
  return { boxes, edges, width: graph.width ?? 0, height: graph.height ?? 0, ms: performance.now() - start };
}

/** Each cluster's box around its children's (innermost first), with room for its header above them. */
function boundClusters(req: LayoutRequest, boxes: Record<string, Box>): void {
  const children = new Map<string, string[]>();
  for (const x of [...req.nodes, ...req.clusters])
    if (x.parent) children.set(x.parent, [...(children.get(x.parent) ?? []), x.id]);
  for (const c of [...req.clusters].reverse()) {
    const inside = (children.get(c.id) ?? []).map((id) => boxes[id]).filter((b): b is Box => !!b);
    if (!inside.length) continue;
    const left = Math.min(...inside.map((b) => b.x - b.width / 2)) - 8;
    const right = Math.max(...inside.map((b) => b.x + b.width / 2)) + 8;
    const top = Math.min(...inside.map((b) => b.y - b.height / 2)) - 18;
    const bottom = Math.max(...inside.map((b) => b.y + b.height / 2)) + 6;
    boxes[c.id] = { x: (left + right) / 2, y: (top + bottom) / 2, width: right - left, height: bottom - top };
  }
}

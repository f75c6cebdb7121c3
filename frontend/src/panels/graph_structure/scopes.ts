/**
 * Name-scope groups of the drawn neighbourhood (as TensorBoard's Graphs dashboard groups ops): an op named
 * `model/dense_1/MatMul` lies in the scopes `model` and `model/dense_1` of its graph. Pure functions, tested
 * without a DOM: the scope tree of the drawn nodes, which groups start collapsed, and the graph that is drawn once
 * some groups are collapsed — each collapsed group one node (its op count, its worst health), the edges into and
 * out of it rerouted to that node and merged, with counts.
 */
import type { NeighborhoodNode, NeighborhoodResponse, TensorHealth } from '../../api/wire.ts';

/** Over this many drawn ops, the scopes away from the focused op and the root cause's path start collapsed. */
export const COLLAPSE_OVER = 60;

export type HealthClass = 'nonfinite' | 'contained' | 'unknown' | 'finite' | 'untraced';

/** Worst first: what a collapsed group shows for the ops it hides. */
const WORST_FIRST: HealthClass[] = ['nonfinite', 'contained', 'unknown', 'finite', 'untraced'];

/** The health class of a node: what its colour says. */
export function healthClass(n: NeighborhoodNode): HealthClass {
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

export interface ScopeGroup {
  /** `scope:<graph id>:<path>`: scopes of different graphs (a function and its caller) are different groups. */
  id: string;
  graphId: string;
  /** The whole scope, e.g. `model/dense_1`. */
  path: string;
  /** The path below the enclosing group's (what its box is labelled with). */
  label: string;
  /** The enclosing group, or null at the top. */
  parent: string | null;
  /** The drawn nodes inside, at any depth. */
  members: string[];
}

export interface ScopeTree {
  /** Outermost first (a parent before its children). */
  groups: ScopeGroup[];
  byId: Map<string, ScopeGroup>;
  /** Node id -> its innermost group. */
  innermost: Map<string, string>;
}

const groupId = (graphId: string, path: string) => `scope:${graphId}:${path}`;

/** The scope prefixes of an op name: `a/b/C` -> [`a`, `a/b`]. */
export function scopesOf(opName: string): string[] {
  const parts = opName.split('/');
  return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join('/'));
}

/**
 * The groups worth drawing: a scope holding at least two drawn ops, and of a chain of scopes that hold the same
 * ops (`model` holding only `model/dense_1`) only the innermost (two boxes around the same ops say nothing more).
 */
export function scopeTree(nodes: NeighborhoodNode[]): ScopeTree {
  const members = new Map<string, { graphId: string; path: string; ids: string[] }>();
  for (const n of nodes) {
    if (n.kind !== 'op' || !n.graph_id || !n.op_name) continue;
    for (const path of scopesOf(n.op_name)) {
      const id = groupId(n.graph_id, path);
      const m = members.get(id) ?? { graphId: n.graph_id, path, ids: [] };
      m.ids.push(n.id);
      members.set(id, m);
    }
  }
  const candidates = [...members.entries()].filter(([, m]) => m.ids.length >= 2);
  // a scope whose one child scope holds all its ops: its ops' sets are equal, so equal counts say it
  const kept = candidates.filter(
    ([, m]) =>
      !candidates.some(
        ([, c]) => c.graphId === m.graphId && c.path.startsWith(m.path + '/') && c.ids.length === m.ids.length,
      ),
  );
  kept.sort(([, a], [, b]) => a.path.split('/').length - b.path.split('/').length || a.path.localeCompare(b.path));
  const keptIds = new Set(kept.map(([id]) => id));
  const enclosing = (graphId: string, path: string): string | null => {
    const outer = scopesOf(path).reverse();
    for (const p of outer) if (keptIds.has(groupId(graphId, p))) return groupId(graphId, p);
    return null;
  };
  const groups: ScopeGroup[] = kept.map(([id, m]) => {
    const parent = enclosing(m.graphId, m.path);
    const parentPath = parent ? (members.get(parent)?.path ?? '') : '';
    const label = parent ? m.path.slice(parentPath.length + 1) : m.path;
    return { id, graphId: m.graphId, path: m.path, label, parent, members: m.ids };
  });
  const innermost = new Map<string, string>();
  for (const n of nodes) {
    if (n.kind !== 'op' || !n.graph_id || !n.op_name) continue;
    const g = enclosing(n.graph_id, n.op_name);
    if (g) innermost.set(n.id, g);
  }
  return { groups, byId: new Map(groups.map((g) => [g.id, g])), innermost };
}

/**
 * The groups collapsed when the user has not chosen: none in a small neighbourhood; in a large one every group
 * that holds neither the focused op nor an op on the root cause's path (those stay open, so what the user came
 * to see is drawn op by op).
 */
export function defaultCollapsed(
  tree: ScopeTree,
  nodes: NeighborhoodNode[],
  focusId: string,
  over = COLLAPSE_OVER,
): Set<string> {
  if (nodes.length <= over) return new Set();
  const keep = new Set(nodes.filter((n) => n.id === focusId || n.on_path).map((n) => n.id));
  return new Set(tree.groups.filter((g) => !g.members.some((id) => keep.has(id))).map((g) => g.id));
}

/** The groups collapsed: the defaults, then the user's choices (group id -> collapsed) over them. */
export function collapsedGroups(defaults: Set<string>, choices: ReadonlyMap<string, boolean>): Set<string> {
  const out = new Set(defaults);
  for (const [id, collapsed] of choices) {
    if (collapsed) out.add(id);
    else out.delete(id);
  }
  return out;
}

/** A collapsed group as one drawn node. */
export interface CollapsedGroup {
  group: ScopeGroup;
  count: number;
  /** The worst health among its ops. */
  health: HealthClass;
  /** How many of its ops are NaN/∞ at the focused step. */
  nonfinite: number;
  onPath: boolean;
  devices: string[];
}

export type DrawnItem =
  | { kind: 'node'; id: string; parent: string | null; node: NeighborhoodNode }
  | { kind: 'group'; id: string; parent: string | null; collapsed: CollapsedGroup };

export interface DrawnEdge {
  /** `source->target` of the drawn ends. */
  id: string;
  source: string;
  target: string;
  /** How many of the answer's edges it stands for. */
  count: number;
  /** Any of them crosses a function boundary. */
  cross: boolean;
}

export interface DrawnGraph {
  items: DrawnItem[];
  /** The expanded groups that are drawn (as labelled boxes), outermost first; `parent` is a drawn box too. */
  boxes: ScopeGroup[];
  edges: DrawnEdge[];
}

/** What is drawn with `collapsed` groups closed: each op inside one is replaced by its outermost closed group. */
export function drawnGraph(n: NeighborhoodResponse, tree: ScopeTree, collapsed: ReadonlySet<string>): DrawnGraph {
  const chain = (start: string | null | undefined): ScopeGroup[] => {
    const out: ScopeGroup[] = [];
    for (let g = start ? tree.byId.get(start) : undefined; g; g = g.parent ? tree.byId.get(g.parent) : undefined)
      out.push(g);
    return out; // innermost first
  };
  const outermostClosed = (groups: ScopeGroup[]) => groups.filter((g) => collapsed.has(g.id)).at(-1);
  const drawnAs = new Map<string, string>();
  const items: DrawnItem[] = [];
  for (const node of n.nodes) {
    const groups = chain(tree.innermost.get(node.id));
    const closed = outermostClosed(groups);
    drawnAs.set(node.id, closed?.id ?? node.id);
    if (!closed) items.push({ kind: 'node', id: node.id, parent: groups[0]?.id ?? null, node });
  }
  const boxes: ScopeGroup[] = [];
  const byNode = new Map(n.nodes.map((x) => [x.id, x]));
  for (const g of tree.groups) {
    const above = chain(g.id);
    const closed = outermostClosed(above);
    if (!closed) boxes.push(g);
    else if (closed === g) items.push({ kind: 'group', id: g.id, parent: g.parent, collapsed: summary(g, byNode) });
  }
  return { items, boxes, edges: rerouted(n, drawnAs) };
}

function summary(group: ScopeGroup, byNode: Map<string, NeighborhoodNode>): CollapsedGroup {
  const nodes = group.members.map((id) => byNode.get(id)).filter((x): x is NeighborhoodNode => !!x);
  const classes = nodes.map(healthClass);
  return {
    group,
    count: nodes.length,
    health: WORST_FIRST.find((c) => classes.includes(c)) ?? 'untraced',
    nonfinite: classes.filter((c) => c === 'nonfinite').length,
    onPath: nodes.some((x) => x.on_path),
    devices: [...new Set(nodes.map((x) => x.device).filter((d): d is string => !!d))].sort(),
  };
}

/** The answer's edges between drawn ends: those inside one closed group dropped, the rest merged with counts. */
function rerouted(n: NeighborhoodResponse, drawnAs: Map<string, string>): DrawnEdge[] {
  const merged = new Map<string, DrawnEdge>();
  for (const e of n.edges) {
    const source = drawnAs.get(e.source) ?? e.source;
    const target = drawnAs.get(e.target) ?? e.target;
    if (source === target && (source !== e.source || target !== e.target)) continue;
    const id = `${source}->${target}`;
    const edge = merged.get(id);
    if (edge) {
      edge.count++;
      edge.cross ||= e.cross_graph;
    } else merged.set(id, { id, source, target, count: 1, cross: e.cross_graph });
  }
  return [...merged.values()];
}

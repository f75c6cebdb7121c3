// The drawn graph's layout time: the panel's own code (scopes.ts groups the ops by name scope, drawn_graph.ts's
// layoutRequest, layout.ts runs @dagrejs/dagre top to bottom; in the page this runs in a Web Worker), timed here in
// Node on one core. Each graph is laid out three ways: flat (every op, no scope boxes: what the panel drew before
// it grouped by scope), grouped with every scope open (dagre's compound layout), and grouped as the panel opens it
// (over 60 ops, the scopes away from the focused op and the root cause's path start collapsed).
// Graphs: a synthetic 300-node one (the route's node cap; 1-3 inputs per node from the 8 ops before it, in scopes
// of 10 ops, two levels deep), and real graph_neighborhood answers saved as JSON.
//     node --import tsx bench/layout_time.mjs [nodes=300] [reps=10] [answer.json ...]
import { readFileSync } from 'node:fs';
import { scopeTree, defaultCollapsed, drawnGraph } from '../frontend/src/panels/graph_structure/scopes.ts';
import { layoutRequest } from '../frontend/src/panels/graph_structure/drawn_graph.ts';
import { computeLayout } from '../frontend/src/panels/graph_structure/layout.ts';

const nodes = Number(process.argv[2] ?? 300);
const reps = Number(process.argv[3] ?? 10);
const files = process.argv.slice(4);

/** The synthetic answer: op i in scope `block_<i/50>/part_<i/10>`, reading 1-3 of the 8 ops before it. */
function synthetic() {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const name = (i) => `block_${Math.floor(i / 50)}/part_${Math.floor(i / 10)}/op_${i}`;
  const ns = Array.from({ length: nodes }, (_, i) => ({
    id: `g:${name(i)}`,
    kind: 'op',
    graph_id: 'g',
    op_name: name(i),
    op_type: 'AddN',
    depth: 0,
    health: null,
    role: null,
    device: null,
    on_path: false,
    more_up: 0,
    more_down: 0,
  }));
  const edges = [];
  for (let i = 1; i < nodes; i++) {
    const inputs = 1 + Math.floor(rand() * 3);
    for (let k = 0; k < inputs; k++) {
      const j = Math.max(0, i - 1 - Math.floor(rand() * 8));
      edges.push({ source: ns[j].id, source_slot: 0, target: ns[i].id, target_slot: k, cross_graph: false });
    }
  }
  const focus = ns[nodes >> 1];
  return { op_name: focus.op_name, graph_id: 'g', nodes: ns, edges, focusId: focus.id };
}

function time(request) {
  const ms = [];
  for (let r = 0; r < reps; r++) ms.push(computeLayout(request).ms);
  ms.sort((a, b) => a - b);
  return `median ${ms[reps >> 1].toFixed(0)} ms, max ${ms[reps - 1].toFixed(0)} ms`;
}

function report(label, n, focusId) {
  const tree = scopeTree(n.nodes);
  const flat = drawnGraph(n, { groups: [], byId: new Map(), innermost: new Map() }, new Set());
  const open = drawnGraph(n, tree, new Set());
  const closed = defaultCollapsed(tree, n.nodes, focusId);
  const opened = drawnGraph(n, tree, closed);
  console.log(`${label}: ${n.nodes.length} nodes, ${n.edges.length} edges, ${tree.groups.length} scopes`);
  console.log(`  flat (no scopes)            ${flat.items.length} nodes: ${time(layoutRequest(flat))}`);
  console.log(`  every scope open            ${open.items.length} nodes: ${time(layoutRequest(open))}`);
  console.log(
    `  as opened (${closed.size} scopes closed)  ${opened.items.length} nodes, ${opened.boxes.length} boxes: ` +
      time(layoutRequest(opened)),
  );
}

const s = synthetic();
report(`synthetic (${reps} runs each)`, s, s.focusId);
for (const file of files) {
  const n = JSON.parse(readFileSync(file, 'utf8'));
  report(`${file}: around ${n.op_name}`, n, `${n.graph_id}:${n.op_name}`);
}

// The drawn graph's layout time (Graph Structure's drawn mode uses @dagrejs/dagre), laid out top to bottom as the
// panel does: a synthetic 300-node graph (the route's node cap; 1-3 inputs per node from the 8 ops before it), or
// a real graph_neighborhood answer saved as JSON.
//     node bench/layout_time.mjs [nodes=300] [reps=20] [answer.json]
import { readFileSync } from 'node:fs';
import dagre from '@dagrejs/dagre';

const nodes = Number(process.argv[2] ?? 300);
const reps = Number(process.argv[3] ?? 20);
const answer = process.argv[4] ? JSON.parse(readFileSync(process.argv[4], 'utf8')) : null;

function graph() {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  if (answer) {
    g.setGraph({ rankdir: 'TB', nodesep: 16, ranksep: 34, marginx: 8, marginy: 8 });
    g.setDefaultEdgeLabel(() => ({}));
    for (const n of answer.nodes) g.setNode(n.id, { width: 150, height: 38 });
    answer.edges.forEach((e, i) => g.setEdge(e.source, e.target, {}, String(i)));
    return [g, answer.edges.length];
  }
  g.setGraph({
    rankdir: 'TB',
    nodesep: 16,
    ranksep: 34,
    marginx: 8,
    marginy: 8,
    ranker: process.env.RANKER ?? 'network-simplex',
  });
  g.setDefaultEdgeLabel(() => ({}));
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < nodes; i++) g.setNode(`n${i}`, { width: 150, height: 38 });
  let edges = 0;
  for (let i = 1; i < nodes; i++) {
    const inputs = 1 + Math.floor(rand() * 3); // 1-3 data inputs from earlier ops
    // from the few ops just before it (a neighbourhood is hops deep: its edges are short)
    for (let k = 0; k < inputs; k++)
      g.setEdge(`n${Math.max(0, i - 1 - Math.floor(rand() * 8))}`, `n${i}`, {}, String(edges++));
  }
  return [g, edges];
}

const times = [];
let edgeCount = 0;
for (let r = 0; r < reps; r++) {
  const [g, e] = graph();
  edgeCount = e;
  const t = performance.now();
  dagre.layout(g);
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
console.log(
  `dagre layout of ${answer ? answer.nodes.length : nodes} nodes / ${edgeCount} edges: median ${times[reps >> 1].toFixed(1)} ms, ` +
    `max ${times[reps - 1].toFixed(1)} ms (${reps} runs)`,
);

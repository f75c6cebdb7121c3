/** Graph Structure's name-scope groups (scopes.ts) and the layout client (layout_client.ts), without a DOM. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NeighborhoodNode, NeighborhoodResponse } from '../src/api/wire.ts';
import {
  collapsedGroups,
  defaultCollapsed,
  drawnGraph,
  scopesOf,
  scopeTree,
  type DrawnItem,
} from '../src/panels/graph_structure/scopes.ts';
import { computeLayout, type LayoutRequest } from '../src/panels/graph_structure/layout.ts';
import { LayoutClient } from '../src/panels/graph_structure/layout_client.ts';
import { layoutRequest } from '../src/panels/graph_structure/drawn_graph.ts';
import { deviceBadges, shortDevice } from '../src/panels/graph_structure/drawn_parts.ts';

const CPU0 = '/job:localhost/replica:0/task:0/device:CPU:0';
const GPU0 = '/job:localhost/replica:0/task:0/device:GPU:0';

function op(name: string, extra: Partial<NeighborhoodNode> = {}): NeighborhoodNode {
  return {
    id: `g:${name}`,
    kind: 'op',
    graph_id: 'g',
    op_name: name,
    op_type: name.split('/').at(-1)!,
    depth: 0,
    trace_index: 1,
    health: { mode: 'FULL_HEALTH', nan: 0, neg_inf: 0, pos_inf: 0 } as never,
    role: null,
    device: CPU0,
    on_path: false,
    more_up: 0,
    more_down: 0,
    ...extra,
  };
}

function answer(nodes: NeighborhoodNode[], edges: [string, string, boolean?][]): NeighborhoodResponse {
  return {
    run: 'a',
    graph_id: 'g',
    op_name: nodes[0]!.op_name!,
    hops: 3,
    direction: 'both',
    near: null,
    nodes,
    edges: edges.map(([s, t, cross]) => ({
      source: `g:${s}`,
      source_slot: 0,
      target: `g:${t}`,
      target_slot: 0,
      cross_graph: !!cross,
    })),
    truncated: false,
    notes: [],
  };
}

const NAN = { mode: 'FULL_HEALTH', nan: 2, neg_inf: 0, pos_inf: 0 } as never;

// x -> model/dense/MatMul -> model/dense/BiasAdd -> model/dense/Relu -> model/out/MatMul -> loss
//                    model/dense/kernel ^ (a second edge into MatMul)      model/out/kernel ^
function sample() {
  return answer(
    [
      op('x'),
      op('model/dense/kernel'),
      op('model/dense/MatMul'),
      op('model/dense/BiasAdd', { health: NAN }),
      op('model/dense/Relu', { on_path: true }),
      op('model/out/kernel'),
      op('model/out/MatMul'),
      op('loss'),
    ],
    [
      ['x', 'model/dense/MatMul'],
      ['model/dense/kernel', 'model/dense/MatMul'],
      ['model/dense/MatMul', 'model/dense/BiasAdd'],
      ['model/dense/BiasAdd', 'model/dense/Relu'],
      ['model/dense/Relu', 'model/out/MatMul'],
      ['model/dense/Relu', 'model/out/MatMul', true],
      ['model/out/kernel', 'model/out/MatMul'],
      ['model/out/MatMul', 'loss'],
    ],
  );
}

const ids = (items: DrawnItem[]) => items.map((i) => i.id).sort();

test('scopes of an op name are its prefixes', () => {
  assert.deepEqual(scopesOf('a/b/C'), ['a', 'a/b']);
  assert.deepEqual(scopesOf('C'), []);
});

test('the scope tree: groups of two or more ops, nested, each op in its innermost group', () => {
  const tree = scopeTree(sample().nodes);
  assert.deepEqual(
    tree.groups.map((g) => [g.path, g.label, g.parent, g.members.length]),
    [
      ['model', 'model', null, 6],
      ['model/dense', 'dense', 'scope:g:model', 4],
      ['model/out', 'out', 'scope:g:model', 2],
    ],
  );
  assert.equal(tree.innermost.get('g:model/dense/Relu'), 'scope:g:model/dense');
  assert.equal(tree.innermost.get('g:x'), undefined);
});

test('a chain of scopes holding the same ops is one group, labelled with the whole chain', () => {
  const tree = scopeTree(answer([op('a/b/c/X'), op('a/b/c/Y'), op('Z')], []).nodes);
  assert.deepEqual(
    tree.groups.map((g) => [g.path, g.label]),
    [['a/b/c', 'a/b/c']],
  );
});

test('the same scope in two graphs is two groups; an eager call is in none', () => {
  const nodes = [
    op('f/A'),
    op('f/B'),
    { ...op('f/A'), id: 'h:f/A', graph_id: 'h' },
    { ...op('f/B'), id: 'h:f/B', graph_id: 'h' },
    { ...op('call'), id: 'exec:3', kind: 'execution' as const, graph_id: null, op_name: null },
  ];
  const tree = scopeTree(nodes);
  assert.deepEqual(tree.groups.map((g) => g.id).sort(), ['scope:g:f', 'scope:h:f']);
  assert.ok(!tree.innermost.has('exec:3'));
});

test('nothing collapsed: every op drawn inside its boxes, parallel edges merged with a count', () => {
  const n = sample();
  const d = drawnGraph(n, scopeTree(n.nodes), new Set());
  assert.equal(d.items.length, 8);
  assert.deepEqual(
    d.boxes.map((b) => b.path),
    ['model', 'model/dense', 'model/out'],
  );
  assert.equal(d.items.find((i) => i.id === 'g:model/dense/Relu')?.parent, 'scope:g:model/dense');
  const relu = d.edges.find((e) => e.id === 'g:model/dense/Relu->g:model/out/MatMul')!;
  assert.equal(relu.count, 2);
  assert.equal(relu.cross, true, 'one of the merged edges crosses a function boundary');
  assert.equal(d.edges.length, 7);
});

test('a collapsed group is one node: its count, worst health, path; edges rerouted and counted', () => {
  const n = sample();
  const tree = scopeTree(n.nodes);
  const d = drawnGraph(n, tree, new Set(['scope:g:model/dense']));
  assert.deepEqual(ids(d.items), ['g:loss', 'g:model/out/MatMul', 'g:model/out/kernel', 'g:x', 'scope:g:model/dense']);
  const group = d.items.find((i) => i.kind === 'group');
  assert.ok(group && group.kind === 'group');
  assert.equal(group.parent, 'scope:g:model', 'a collapsed inner scope stays inside its open parent');
  assert.equal(group.collapsed.count, 4);
  assert.equal(group.collapsed.health, 'nonfinite');
  assert.equal(group.collapsed.nonfinite, 1);
  assert.equal(group.collapsed.onPath, true);
  assert.deepEqual(group.collapsed.devices, [CPU0]);
  assert.deepEqual(
    d.boxes.map((b) => b.path),
    ['model', 'model/out'],
  );
  const edges = Object.fromEntries(d.edges.map((e) => [e.id, e.count]));
  assert.deepEqual(edges, {
    'g:x->scope:g:model/dense': 1,
    'scope:g:model/dense->g:model/out/MatMul': 2,
    'g:model/out/kernel->g:model/out/MatMul': 1,
    'g:model/out/MatMul->g:loss': 1,
  });
  assert.ok(!d.edges.some((e) => e.source.startsWith('g:model/dense/') || e.target.startsWith('g:model/dense/')));
});

test('collapsing an outer scope hides the inner ones; the outermost closed group stands for its ops', () => {
  const n = sample();
  const d = drawnGraph(n, scopeTree(n.nodes), new Set(['scope:g:model', 'scope:g:model/dense']));
  assert.deepEqual(ids(d.items), ['g:loss', 'g:x', 'scope:g:model']);
  assert.deepEqual(d.boxes, []);
  const edges = Object.fromEntries(d.edges.map((e) => [e.id, e.count]));
  assert.deepEqual(edges, { 'g:x->scope:g:model': 1, 'scope:g:model->g:loss': 1 });
  const req = layoutRequest(d);
  assert.deepEqual(req.clusters, []);
  assert.equal(req.nodes.length, 3);
});

test('defaults: a small neighbourhood all open; a large one closes scopes away from the focus and the path', () => {
  const n = sample();
  const tree = scopeTree(n.nodes);
  assert.deepEqual(defaultCollapsed(tree, n.nodes, 'g:loss'), new Set());
  const closed = defaultCollapsed(tree, n.nodes, 'g:model/out/MatMul', 4);
  // model holds the focus and the path, model/dense the path (Relu), model/out the focus: all stay open
  assert.deepEqual(closed, new Set());
  const away = defaultCollapsed(
    tree,
    n.nodes.map((x) => ({ ...x, on_path: false })),
    'g:loss',
    4,
  );
  assert.deepEqual(away, new Set(['scope:g:model', 'scope:g:model/dense', 'scope:g:model/out']));
  const user = collapsedGroups(away, new Map([['scope:g:model', false]]));
  assert.deepEqual(user, new Set(['scope:g:model/dense', 'scope:g:model/out']), "the user's choice wins");
});

test('dagre nests a collapsed scope inside its open parent, producers above consumers', () => {
  const n = sample();
  const d = drawnGraph(n, scopeTree(n.nodes), new Set(['scope:g:model/dense']));
  const r = computeLayout(layoutRequest(d));
  const inside = (inner: string, outer: string) => {
    const a = r.boxes[inner]!;
    const b = r.boxes[outer]!;
    return a.x - a.width / 2 >= b.x - b.width / 2 && a.x + a.width / 2 <= b.x + b.width / 2;
  };
  assert.ok(inside('scope:g:model/dense', 'scope:g:model'));
  assert.ok(inside('g:model/out/MatMul', 'scope:g:model/out'));
  assert.ok(r.boxes['g:x']!.y < r.boxes['scope:g:model/dense']!.y);
  assert.ok(r.boxes['scope:g:model/dense']!.y < r.boxes['g:loss']!.y);
  assert.ok((r.edges['g:x->scope:g:model/dense'] ?? []).length >= 2);
});

test('device badges: on ops off the focused op device, or on every op when the drawing spans two devices', () => {
  assert.equal(shortDevice(GPU0), 'GPU:0');
  const one = [op('a'), op('b'), op('c', { device: null })];
  const onOne = deviceBadges(one, 'g:a');
  assert.deepEqual(one.map(onOne), [false, false, false]);
  const two = [op('a'), op('b', { device: GPU0 }), op('c', { device: null })];
  const onTwo = deviceBadges(two, 'g:a');
  assert.deepEqual(two.map(onTwo), [true, true, false]);
  const untracedFocus = [op('a', { device: null }), op('b'), op('c')];
  assert.deepEqual(untracedFocus.map(deviceBadges(untracedFocus, 'g:a')), [false, false, false]);
});

/** A stand-in Worker: answers when told to, so the test decides which request finishes first. */
class FakeWorker {
  onmessage: ((e: MessageEvent) => void) | null = null;
  onerror: ((e: ErrorEvent) => void) | null = null;
  posted: { seq: number; request: LayoutRequest }[] = [];
  terminated = false;
  postMessage(m: { seq: number; request: LayoutRequest }) {
    this.posted.push(m);
  }
  terminate() {
    this.terminated = true;
  }
  answer(i = 0) {
    const m = this.posted[i]!;
    this.onmessage?.({ data: { seq: m.seq, result: computeLayout(m.request) } } as MessageEvent);
  }
}

const tiny = (id: string): LayoutRequest => ({ nodes: [{ id, width: 10, height: 10 }], clusters: [], edges: [] });

test('layout client: a newer request wins; a worker busy with a stale layout is replaced', async () => {
  const made: FakeWorker[] = [];
  const client = new LayoutClient(() => {
    made.push(new FakeWorker());
    return made.at(-1) as unknown as Worker;
  });
  const first = client.layout(tiny('a'));
  const second = client.layout(tiny('b'));
  assert.equal(await first, null, 'the older request resolves to null');
  assert.equal(made.length, 2);
  assert.ok(made[0]!.terminated, 'the busy worker was stopped, not waited for');
  made[1]!.answer();
  const placed = await second;
  assert.equal(placed?.where, 'worker');
  assert.ok(placed?.result.boxes['b']);
  const third = client.layout(tiny('c'));
  assert.equal(made.length, 2, 'an idle worker is reused');
  made[1]!.answer(1);
  assert.ok((await third)?.result.boxes['c']);
});

test('layout client: no Worker, or one whose script fails, runs dagre on the page thread', async () => {
  const none = new LayoutClient(() => {
    throw new Error('no Worker');
  });
  assert.equal((await none.layout(tiny('a')))?.where, 'main');
  const broken = new FakeWorker();
  const failing = new LayoutClient(() => broken as unknown as Worker);
  const pending = failing.layout(tiny('b'));
  broken.onerror?.({ preventDefault() {} } as ErrorEvent);
  const placed = await pending;
  assert.equal(placed?.where, 'main');
  assert.ok(placed?.result.boxes['b']);
  assert.ok(broken.terminated);
});

test('over the compound cap, ops are laid out flat and each open scope boxed around where its ops landed', () => {
  const many = answer(
    Array.from({ length: 120 }, (_, i) => op(`s${i % 3}/t${i % 6}/op${i}`)),
    Array.from({ length: 119 }, (_, i): [string, string] => [
      `s${i % 3}/t${i % 6}/op${i}`,
      `s${(i + 1) % 3}/t${(i + 1) % 6}/op${i + 1}`,
    ]),
  );
  const d = drawnGraph(many, scopeTree(many.nodes), new Set());
  assert.ok(d.items.length > 100 && d.boxes.length === 9);
  const r = computeLayout(layoutRequest(d));
  for (const item of d.items) {
    const a = r.boxes[item.id]!;
    const b = r.boxes[item.parent!]!;
    assert.ok(a.x - a.width / 2 >= b.x - b.width / 2 && a.y + a.height / 2 <= b.y + b.height / 2, item.id);
  }
});

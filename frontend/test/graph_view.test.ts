/** Graph Structure's drawn mode: the neighbourhood follows the op shown, with the hops asked, only when drawn. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Controller } from '../src/controller/controller.ts';
import { Store } from '../src/store/store.ts';
import { computeLayout } from '../src/panels/graph_structure/layout.ts';
import { FakeApi, memUrl } from './fake_api.ts';

const settle = () => new Promise((r) => setTimeout(r, 0));

async function focused() {
  const store = new Store();
  const api = new FakeApi();
  const ctl = new Controller(
    store,
    api,
    memUrl({ run: 'a', focus: { kind: 'graph_execution', index: 3 }, alert: null }),
  );
  await ctl.start();
  ctl.stop();
  await settle();
  return { store, api, ctl };
}

test('the list mode fetches no neighbourhood; the drawn mode fetches it for the focused trace', async () => {
  const { store, api, ctl } = await focused();
  assert.ok(!api.calls.some((c) => c.startsWith('graph_neighborhood')));
  ctl.setGraphView({ mode: 'drawn', hops: 3 });
  await settle();
  assert.ok(api.calls.includes('graph_neighborhood g1 Log 3 3'), api.calls.join('\n'));
  assert.equal(store.state.neighborhood.data?.nodes[0]?.op_name, 'Log');
  ctl.setGraphView({ hops: 99 });
  await settle();
  assert.equal(store.state.graphView.hops, 8, 'hops are clamped to 1..8');
  ctl.setGraphView({ mode: 'list' });
  assert.equal(store.state.neighborhood.status, 'idle');
});

test('dagre lays every node and edge out top to bottom', () => {
  const node = (id: string, depth: number) => ({
    id,
    kind: 'op' as const,
    graph_id: 'g',
    op_name: id,
    op_type: 'Mul',
    depth,
    trace_index: null,
    health: null,
    role: null,
    device: null,
    on_path: false,
    more_up: 0,
    more_down: 0,
  });
  const n = {
    run: 'a',
    graph_id: 'g',
    op_name: 'c',
    hops: 2,
    direction: 'both' as const,
    near: null,
    nodes: [node('a', -2), node('b', -1), node('c', 0)],
    edges: [
      { source: 'a', source_slot: 0, target: 'b', target_slot: 0, cross_graph: false },
      { source: 'b', source_slot: 0, target: 'c', target_slot: 0, cross_graph: true },
    ],
    truncated: false,
    notes: [],
  };
  const r = computeLayout({
    nodes: n.nodes.map((x) => ({ id: x.id, width: 150, height: 38 })),
    clusters: [],
    edges: n.edges.map((e, i) => ({ id: String(i), source: e.source, target: e.target })),
  });
  const y = (id: string) => r.boxes[id]!.y;
  assert.ok(y('a') < y('b') && y('b') < y('c'), 'producers above consumers');
});

test('setting the view it already has fetches nothing (the hops field fires change again on blur)', async () => {
  const { api, ctl } = await focused();
  ctl.setGraphView({ mode: 'drawn', hops: 4 });
  await settle();
  const before = api.calls.length;
  ctl.setGraphView({ hops: 4 });
  await settle();
  assert.equal(api.calls.length, before);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Api } from '../src/api/client.ts';
import type { GraphExecutionFilters } from '../src/api/requests.ts';
import type { CompareResponse, NeighborhoodResponse, TraceDifference } from '../src/api/wire.ts';
import { differenceOf } from '../src/store/compared_rows.ts';
import { ready } from '../src/store/store.ts';
import { startController, type FakeApi } from './fake_api.ts';

const settle = () => new Promise((r) => setTimeout(r, 5));

const differs = (i: number): TraceDifference => ({
  status: 'differs',
  text: `${i} / 1`,
  summary: 'max abs',
  magnitude: i,
});
const same: TraceDifference = { status: 'same', text: '=', summary: 'bitwise equal', magnitude: null };

function compareAnswer(run: string, base: string): CompareResponse {
  return {
    run,
    base,
    mode: 'FULL_TENSOR',
    counts: {
      matched: 10,
      divergent: 5,
      only_in_a: 0,
      only_in_b: 0,
      matched_traces: 10,
      matched_executions: 0,
      divergent_traces: 5,
      divergent_executions: 0,
      only_in_b_traces: 0,
    },
    first_divergence: null,
    divergent: [],
    begin: 0,
    end: 0,
    total: 5,
    only_in_a: [],
    only_in_b: [],
    notes: [],
  };
}

/** A fake `compare_rows`: rows of the fake run, the odd ones differing; divergent_only keeps those. */
function withCompareRows(api: FakeApi, asked: string[]): void {
  (api as Api).compare = (run, base) => Promise.resolve(compareAnswer(run, base));
  (api as Api).compareRows = async (run, base, begin, end, f: GraphExecutionFilters = {}) => {
    asked.push(`${run}<-${base} ${begin}-${end}${f.divergentOnly ? ' divergent' : ''}`);
    const all = await api.graphExecutions(run, 0, 1000, { ...f, divergentOnly: undefined });
    const rows = all.rows.filter((r) => !f.divergentOnly || r.index % 2 === 1);
    const page = rows.slice(begin, end);
    return {
      run,
      base,
      begin,
      end: begin + page.length,
      total: rows.length,
      unfiltered_total: all.unfiltered_total,
      rows: page,
      differences: page.map((r) => (r.index % 2 ? differs(r.index) : same)),
      call: null,
    };
  };
}

test('comparing: Graph Execution pages come with their differences; divergent only is a paged filter; stopping drops both', async () => {
  const { store, api, ctl } = await startController();
  const asked: string[] = [];
  withCompareRows(api, asked);
  const run = store.state.run!;
  await ctl.compare.choose('b');
  await settle();
  assert.deepEqual(asked, [`${run}<-b 0-200`]);
  const rows = store.state.geRows;
  assert.equal(differenceOf(rows.item(3)!)?.status, 'differs');
  assert.equal(differenceOf(rows.item(2)!)?.text, '=');
  ctl.setFilters({ ...store.state.geFilters, divergentOnly: true });
  await settle();
  assert.equal(asked.at(-1), `${run}<-b 0-200 divergent`);
  assert.deepEqual(
    [0, 1, 2].map((i) => store.state.geRows.item(i)?.index),
    [1, 3, 5],
  );
  await ctl.compare.choose(null);
  await settle();
  assert.equal(store.state.geFilters.divergentOnly, undefined);
  assert.equal(differenceOf(store.state.geRows.item(3)!), undefined); // the plain list again
});

test("the drawn neighbourhood's traces are asked of compare_traces while comparing, and dropped after", async () => {
  const { store, api, ctl } = await startController();
  withCompareRows(api, []);
  const asked: number[][] = [];
  (api as Api).compareTraces = (run, base, indices) => {
    asked.push(indices);
    return Promise.resolve({ run, base, indices, differences: indices.map(differs) });
  };
  await ctl.compare.choose('b');
  const node = (id: string, trace: number | null) => ({
    id,
    kind: 'op' as const,
    graph_id: 'g',
    op_name: id,
    op_type: 'Log',
    depth: 0,
    trace_index: trace,
    health: null,
    role: null,
    device: null,
    on_path: false,
    more_up: 0,
    more_down: 0,
  });
  const drawn: NeighborhoodResponse = {
    run: store.state.run!,
    graph_id: 'g',
    op_name: 'x',
    hops: 2,
    direction: 'both',
    near: 3,
    nodes: [node('g:x', 3), node('g:y', null), node('g:z', 9)],
    edges: [],
    truncated: false,
    notes: [],
  };
  store.set({ neighborhood: ready(drawn) });
  await settle();
  assert.deepEqual(asked, [[3, 9]]); // only the drawn traces: an op without a trace at this step is not asked
  assert.equal(store.state.compareNodes.data?.differences[1]?.magnitude, 9);
  await ctl.compare.choose(null);
  await settle();
  assert.equal(store.state.compareNodes.status, 'idle');
});

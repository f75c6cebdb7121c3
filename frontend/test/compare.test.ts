import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Api } from '../src/api/client.ts';
import type { CompareResponse, CompareSide } from '../src/api/wire.ts';
import { startController } from './fake_api.ts';

const settle = () => new Promise((r) => setTimeout(r, 5));

function side(index: number, source: 'graph' | 'eager' = 'graph'): CompareSide {
  return {
    source,
    index,
    op_name: 'Log',
    op_type: 'Log',
    function: 'step',
    graph_id: 'g',
    output: 0,
    occurrence: 0,
    file: '/u/train.py',
    line: 42,
    code: 'tf.math.log(x)',
  };
}

function answer(run: string, base: string): CompareResponse {
  const first = { differs: true, summary: 'zero 0 → 1' };
  return {
    run,
    base,
    mode: 'FULL_HEALTH',
    counts: {
      matched: 4,
      divergent: 1,
      only_in_a: 0,
      only_in_b: 0,
      matched_traces: 4,
      matched_executions: 0,
      divergent_traces: 1,
      divergent_executions: 0,
      only_in_b_traces: 0,
    },
    first_divergence: { kind: 'value', why: 'w', a: side(7), b: side(7), metric: first, inputs: [], only_in_b_ops: [] },
    divergent: [{ position: 0, a: side(7), b: side(7), metric: first }],
    begin: 0,
    end: 1,
    total: 1,
    only_in_a: [],
    only_in_b: [],
    notes: [],
  };
}

test('compare with a run: the answer lands in the store; stop comparing clears it; another run shown clears it', async () => {
  const { store, api, ctl } = await startController();
  const asked: string[] = [];
  (api as Api).compare = (run: string, base: string, begin: number, end: number) => {
    asked.push(`${run}<-${base}:${begin}-${end}`);
    return Promise.resolve(answer(run, base));
  };
  const shown = store.state.run!;
  await ctl.compare.choose('b');
  assert.equal(store.state.compareBase, 'b');
  assert.equal(store.state.compare.status, 'ready');
  assert.equal(store.state.compare.data?.first_divergence?.b?.line, 42);
  assert.deepEqual(asked, [`${shown}<-b:0-200`]);
  await ctl.compare.choose(null);
  assert.equal(store.state.compareBase, null);
  assert.equal(store.state.compare.status, 'idle');
  await ctl.compare.choose('b');
  ctl.selectRun('b');
  assert.equal(store.state.compare.status, 'idle'); // the comparison belonged to the run shown before
  assert.equal(store.state.compareBase, null);
});

test('a comparison the server refuses is an error state with its message, never a "no divergence"', async () => {
  const { store, api, ctl } = await startController();
  (api as Api).compare = () => Promise.reject(new Error('different_programs: the runs share 10% of their graph ops'));
  await ctl.compare.choose('b');
  assert.equal(store.state.compare.status, 'error');
  assert.match(store.state.compare.error ?? '', /different_programs/);
});

test("focusing a finding's side focuses B's trace (graph) or execution (eager)", async () => {
  const { store, ctl } = await startController();
  await ctl.compare.focusSide(side(7));
  await settle();
  assert.deepEqual(store.state.focus, { kind: 'graph_execution', index: 7 });
  await ctl.compare.focusSide(side(1, 'eager'));
  await settle();
  assert.deepEqual(store.state.focus, { kind: 'execution', index: 1 });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RootCauseResponse } from '../src/api/wire.ts';
import { ready } from '../src/store/store.ts';
import { startController, type FakeApi } from './fake_api.ts';

const settle = () => new Promise((r) => setTimeout(r, 10));

function found(api: FakeApi, run: string): RootCauseResponse {
  const alert = api.alert(); // trace 7, op Log
  return {
    run,
    status: 'found',
    message: '',
    producer: {
      alert,
      role: 'producer',
      run_number: 0,
      op_name: 'Log',
      op_type: 'Log',
      graph_id: 'g1',
      output_health: { mode: 'CONCISE_HEALTH', tensor_id: 7, size: 4, neg_inf: 1, pos_inf: 0, nan: 0 },
      inputs: [],
      inputs_known: true,
      stack_frame_ids: [],
      user_frame: null,
      source_line: null,
      forward: null,
      data: null,
      overflow: null,
      graph_name: null,
      device: null,
    },
    skipped: [],
    first_kept: false,
    producers: 1,
    propagators: 0,
    contained: 0,
    muted: 0,
    report_text: '',
  };
}

test('a root cause found after a long indexing run is landed on when it is found: trace and op, no focus', async () => {
  const { store, api, ctl } = await startController();
  ctl.firstPaintDone();
  await settle();
  assert.equal(store.state.rootCause.data?.status, 'unknown', 'still reading: nothing to land on');
  assert.equal(store.state.previewTrace, null);
  store.set({ rootCause: ready(found(api as FakeApi, store.state.run!)) }); // as the reload after indexing sets it
  await settle();
  assert.equal(store.state.previewTrace, 7, 'Graph Execution marks the root cause trace');
  assert.equal(store.state.op.status, 'ready', 'Graph Structure shows its op');
  assert.equal(store.state.op.data?.op_name, 'Log');
  assert.equal(store.state.focus, null, 'a preview: keys and n / p still start from the top');
  await ctl.focusGraphExecution(3);
  assert.equal(store.state.previewTrace, null, 'any focus drops it');
  store.set({ rootCause: ready(found(api as FakeApi, store.state.run!)) });
  await settle();
  assert.deepEqual(store.state.focus, { kind: 'graph_execution', index: 3 }, 'once per run, never over a focus');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Api } from '../src/api/client.ts';
import type { TensorTarget } from '../src/api/requests.ts';
import type { CompareValuesResponse } from '../src/api/wire.ts';
import { startController } from './fake_api.ts';

const settle = () => new Promise((r) => setTimeout(r, 5));

/** An Api whose compare_values answers B's tensor (the fake's `tensor`) beside itself, A − B all zero. */
function withCompareValues(api: Api, asked: string[]): void {
  api.compare = () => Promise.reject(new Error('not needed here'));
  api.compareValues = async (run: string, base: string, t: TensorTarget, slice?: string) => {
    asked.push(`${run}<-${base} ${t.source} ${t.index} ${slice ?? '-'}`);
    const b = await api.tensor(run, t, slice, 16);
    const answer: CompareValuesResponse = {
      run,
      base,
      b,
      a: { ...b, run: base },
      status: 'paired',
      metric: { differs: false, summary: 'bitwise equal' },
      difference: b.slice
        ? {
            spec: b.slice.spec,
            shape: b.slice.shape,
            values: b.slice.values.map(() => 0),
            max_abs: 0,
            argmax: [0, 0, 0],
            nonfinite: 0,
          }
        : null,
      health_difference: null,
      note: null,
    };
    return answer;
  };
}

test('while comparing, the open tensor is asked of compare_values with the window the grid asks', async () => {
  const { store, api, ctl } = await startController();
  const asked: string[] = [];
  withCompareValues(api as Api, asked);
  ctl.tensors.open({ source: 'graph', index: 3, output: null });
  await settle();
  assert.deepEqual(asked, [], 'no baseline: nothing asked');
  await ctl.compare.choose('b');
  await settle();
  const run = store.state.run!;
  const cells = store.state.tensorView!.cells.data?.slice?.spec;
  assert.ok(cells, 'the grid asked its window');
  assert.deepEqual(asked, [`${run}<-b graph 3 ${cells}`]);
  assert.equal(store.state.compareTensor.status, 'ready');
  assert.equal(store.state.compareTensor.data?.difference?.max_abs, 0);
  ctl.tensors.setFixed(0, 0); // another plane (it opened on the NaN at [1, 2, 3]): asked again, its window
  await settle();
  assert.equal(asked.length, 2);
  assert.match(asked[1]!, /graph 3 0,/);
  ctl.tensors.close();
  await settle();
  assert.equal(store.state.compareTensor.status, 'idle');
  await ctl.compare.choose(null);
  ctl.tensors.open({ source: 'graph', index: 3, output: null });
  await settle();
  assert.equal(asked.length, 2, 'no baseline: nothing asked again');
  assert.equal(store.state.compareTensor.status, 'idle');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../src/store/store.ts';
import { Controller } from '../src/controller/controller.ts';
import { asTensorResponse, samplePosition } from '../src/controller/capsule_array_loader.ts';
import { capsuleArrayTitle } from '../src/panels/tensor_values/capsule_array_head.ts';
import { FakeApi, memUrl } from './fake_api.ts';

const settle = () => new Promise((r) => setTimeout(r, 10));
const capsule = { path: 'caps/capsule-step000000041', group: 'batch' as const, name: 'x', step: 41 };

for (const runs of ['no run shown', 'a run shown']) {
  test(`a capsule array opens in Tensor Values through capsule_array (${runs}): summary, window, heatmap, no inputs`, async () => {
    const api = new FakeApi();
    if (runs === 'no run shown') api.runsList = [];
    const store = new Store();
    const ctl = new Controller(store, api, memUrl());
    await ctl.start();
    ctl.stop();
    ctl.tensors.open({ source: 'graph', index: -1, output: null, capsule });
    await settle();
    const v = store.state.tensorView!;
    assert.equal(v.summary.status, 'ready', v.summary.error ?? '');
    assert.deepEqual(v.summary.data?.shape, [8, 5]);
    assert.equal(v.summary.data?.stats?.nan, 1);
    assert.deepEqual(v.focusCell, [3, 2], 'the first non-finite position is focused');
    const asked = api.calls.filter((c) => c.startsWith('capsule_array caps/capsule-step000000041 batch x '));
    assert.ok(asked.includes('capsule_array caps/capsule-step000000041 batch x - 48'), api.calls.join('\n'));
    assert.ok(asked.length >= 3, 'summary, window and heatmap: ' + api.calls.join('\n'));
    assert.ok(!api.calls.some((c) => c.startsWith('tensor')), 'neither the tensor route nor its inputs');
    assert.equal(v.cells.data?.slice?.values[7], 'NaN');
    assert.ok(v.npyUrl.includes('capsule_array.npy?'), v.npyUrl);
    const q = new URL(v.npyUrl, 'http://x').searchParams;
    assert.deepEqual([q.get('capsule'), q.get('group'), q.get('name')], [capsule.path, 'batch', 'x']);
    assert.equal(v.inputs.status, 'idle');
  });
}

test('the view names where a capsule array comes from', () => {
  assert.equal(capsuleArrayTitle(capsule), 'capsule step 41 · batch · x');
  const r = asTensorResponse({
    capsule: capsule.path,
    step: 41,
    group: 'weights',
    name: 'dense/kernel',
    dtype: 'float32',
    shape: [5, 16],
    size: 80,
    stats: null,
    histogram: null,
    nonfinite: null,
    slice: null,
  });
  assert.equal(r.tensor.op_name, 'dense/kernel');
  assert.ok(r.has_values && r.health === null && r.note === null);
  assert.deepEqual([r.dtype, r.shape, r.size], ['float32', [5, 16], 80]);
});

for (const [sample, focus] of [
  [3, [3, 2]],
  [5, [5, 0]],
] as const) {
  test(`a row of the per-sample table opens its batch array on sample ${sample}`, async () => {
    const api = new FakeApi();
    const store = new Store();
    const ctl = new Controller(store, api, memUrl());
    await ctl.start();
    ctl.stop();
    ctl.tensors.open({ source: 'graph', index: -1, output: null, capsule: { ...capsule, sample } });
    await settle();
    const v = store.state.tensorView!;
    // the bad sample: its NaN; a finite one: its first element (the grid's row of that sample)
    assert.deepEqual(v.focusCell, [...focus]);
    assert.equal(v.reveal?.row, sample);
    assert.equal(capsuleArrayTitle({ ...capsule, sample }), `capsule step 41 · batch · x · sample ${sample}`);
  });
}

test('a sample outside the array, or none asked, leaves the default focus', () => {
  const r = { shape: [8, 5], nonfinite: { positions: [[3, 2]], per_axis: [], total: 1, truncated: false } };
  const answer = r as unknown as Parameters<typeof samplePosition>[1];
  assert.equal(samplePosition({ ...capsule, sample: 8 }, answer), null);
  assert.equal(samplePosition(capsule, answer), null);
  assert.deepEqual(samplePosition({ ...capsule, sample: 0 }, { ...answer, shape: [8, 2, 3] }), [0, 0, 0]);
});

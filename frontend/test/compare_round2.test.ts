import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Api } from '../src/api/client.ts';
import { shortOpName } from '../src/panels/graph_execution/graph_execution.ts';
import { startController } from './fake_api.ts';

test('long Keras op names are cut in the middle, keeping the last scopes whole', () => {
  assert.equal(shortOpName('dense/MatMul'), 'dense/MatMul');
  const keras = 'sequential/dense_1/compile_loss/sparse_categorical_crossentropy/MatMul';
  assert.equal(shortOpName(keras), '…/MatMul');
  assert.equal(shortOpName('sequential/dense_1/BiasAdd/ReadVariableOp_long'), '…/ReadVariableOp_long');
  assert.equal(shortOpName('sequential_model/dense_1/BiasAdd'), '…/dense_1/BiasAdd');
  const flat = 'a'.repeat(20) + 'b'.repeat(20);
  assert.ok(
    shortOpName(flat).startsWith('aaaa') && shortOpName(flat).endsWith('bbbb') && shortOpName(flat).includes('…'),
  );
});

test('the comparison travels in the permalink (cmp=) and back', async () => {
  const { decodeUrlState, encodeUrlState } = await import('../src/controller/url.ts');
  const text = encodeUrlState({ run: 'changed', focus: null, alert: null, cmp: 'base line' });
  assert.match(text, /cmp=base\+line/);
  assert.equal(decodeUrlState(text).cmp, 'base line');
  assert.equal(decodeUrlState('run=x').cmp, undefined);
});

test('the tolerances the user sets go to every compare route, and travel in the permalink', async () => {
  const { HttpApi } = await import('../src/api/client.ts');
  const urls: string[] = [];
  const api = new HttpApi(async (u) => {
    urls.push(u);
    return { ok: true, status: 200, text: async () => '{}' };
  });
  const tol = { atol: 0.001, rtol: 0.01 };
  await api.compare('b', 'a', 0, 10, tol);
  await api.compareRows('b', 'a', 0, 10, {}, tol);
  await api.compareTraces('b', 'a', [1, 2], tol);
  await api.compareValues('b', 'a', { source: 'graph', index: 3, output: null }, '...', tol);
  assert.equal(urls.length, 4);
  for (const u of urls) assert.match(u, /[?&]atol=0\.001&rtol=0\.01(&|$)/, u);
  await api.compare('b', 'a', 0, 11); // none set: the server's per-dtype defaults
  assert.doesNotMatch(urls[4]!, /tol/);
  const { decodeUrlState, encodeUrlState } = await import('../src/controller/url.ts');
  const text = encodeUrlState({ run: 'changed', focus: null, alert: null, cmp: 'base', tol: { atol: 1e-7 } });
  assert.deepEqual(decodeUrlState(text).tol, { atol: 1e-7 });
  assert.equal(decodeUrlState('run=x&cmp=b&atol=-1&rtol=1e999x').tol, undefined, 'not a tolerance: ignored');
});

test('setting tolerances compares again at them, and Tensor Values asks at them too', async () => {
  const { store, api, ctl } = await startController();
  const asked: string[] = [];
  (api as Api).compare = async (run, base, _b, _e, tol) => {
    asked.push(`compare ${JSON.stringify(tol)}`);
    return Promise.reject(new Error(`compared ${run} with ${base}`));
  };
  (api as Api).compareValues = async (_run, _base, _t, _slice, tol) => {
    asked.push(`values ${JSON.stringify(tol)}`);
    return Promise.reject(new Error('not needed'));
  };
  await ctl.compare.choose('b');
  await ctl.compare.setTolerances({ rtol: 0.5 });
  assert.deepEqual(store.state.compareTolerances, { rtol: 0.5 });
  assert.equal(store.state.compareBase, 'b');
  ctl.tensors.open({ source: 'graph', index: 3, output: null });
  await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(asked.slice(0, 2), ['compare {}', 'compare {"rtol":0.5}']);
  assert.ok(asked.includes('values {"rtol":0.5}'), asked.join('; '));
});

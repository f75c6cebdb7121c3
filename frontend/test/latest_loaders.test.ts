/**
 * The loaders moved onto controller/latest.ts (#40 item 8): for each, an earlier request's late answer is never put
 * over a newer one's (latest wins), and a failed request puts the failed state in its slot.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Api } from '../src/api/client.ts';
import { Store } from '../src/store/store.ts';
import { CompareLoader } from '../src/controller/compare_loader.ts';
import { RootCauseLoader } from '../src/controller/root_cause_loader.ts';
import { RulesLoader } from '../src/controller/rules_loader.ts';
import { TensorLoader } from '../src/controller/tensor_loader.ts';

/** Answers a test hands out by hand, in the order it chooses. */
class Gate<T> {
  readonly waiting: { resolve: (v: T) => void; reject: (e: Error) => void }[] = [];
  next(): Promise<T> {
    return new Promise<T>((resolve, reject) => this.waiting.push({ resolve, reject }));
  }
}

function storeOn(run: string): Store {
  const store = new Store();
  store.set({ run });
  return store;
}

test('root cause: the latest request wins; a failure is the failed state', async () => {
  const gate = new Gate<{ message: string }>();
  const api = { rootCause: () => gate.next() } as unknown as Api;
  const store = storeOn('a');
  const loader = new RootCauseLoader(store, api);
  const first = loader.load();
  const second = loader.load();
  gate.waiting[1]!.resolve({ message: 'second' });
  await second;
  gate.waiting[0]!.resolve({ message: 'first, late' });
  await first;
  assert.equal(store.state.rootCause.status, 'ready');
  assert.equal(store.state.rootCause.data!.message, 'second');
  const third = loader.load();
  gate.waiting[2]!.reject(new Error('HTTP 500: boom'));
  await third;
  assert.equal(store.state.rootCause.status, 'error');
  assert.equal(store.state.rootCause.error, 'HTTP 500: boom');
});

test('root cause: an answer for a run no longer shown is dropped', async () => {
  const gate = new Gate<{ message: string }>();
  const store = storeOn('a');
  const loader = new RootCauseLoader(store, { rootCause: () => gate.next() } as unknown as Api);
  const asked = loader.load();
  store.set({ run: 'b' });
  gate.waiting[0]!.resolve({ message: 'for a' });
  await asked;
  assert.notEqual(store.state.rootCause.status, 'ready');
});

test('compare: the latest baseline wins (the rows reopen once, for it); a failure is the failed state', async () => {
  const gate = new Gate<{ base: string }>();
  const api = { compare: (_run: string, base: string) => gate.next().then(() => ({ base })) } as unknown as Api;
  const store = storeOn('b');
  let reopened = 0;
  const focus = { focusGraphExecution: async () => {}, focusExecution: async () => {}, reopenTraces: () => reopened++ };
  const loader = new CompareLoader(store, api, focus);
  const first = loader.choose('a1');
  const second = loader.choose('a2');
  gate.waiting[1]!.resolve({ base: '' });
  await second;
  gate.waiting[0]!.resolve({ base: '' });
  await first;
  assert.deepEqual([store.state.compare.status, store.state.compare.data, reopened], ['ready', { base: 'a2' }, 1]);
  const third = loader.choose('a3');
  gate.waiting[2]!.reject(new Error('HTTP 409: the runs were recorded in different modes'));
  await third;
  assert.equal(store.state.compare.status, 'error');
  assert.match(store.state.compare.error!, /different modes/);
  assert.equal(reopened, 1);
});

test('alert summary: the latest request wins; a failure is the failed state', async () => {
  const gate = new Gate<{ total: number; rules_pending: boolean }>();
  const store = storeOn('a');
  const loader = new RulesLoader(store, { alerts: () => gate.next() } as unknown as Api);
  const first = loader.loadSummary();
  const second = loader.loadSummary();
  gate.waiting[1]!.resolve({ total: 2, rules_pending: false });
  gate.waiting[0]!.resolve({ total: 1, rules_pending: false });
  await Promise.all([first, second]);
  assert.equal(store.state.alertSummary.data!.total, 2);
  const third = loader.loadSummary();
  gate.waiting[2]!.reject(new Error('network down'));
  await third;
  assert.deepEqual([store.state.alertSummary.status, store.state.alertSummary.error], ['error', 'network down']);
});

test('tensor values: a tensor opened after another wins; closing drops the answer; a failure is failed', async () => {
  const gate = new Gate<{ has_values: boolean; shape: null; nonfinite: null }>();
  const inputs = new Gate<{ inputs: [] }>();
  const api = { tensor: () => gate.next(), tensorInputs: () => inputs.next() } as unknown as Api;
  const store = storeOn('a');
  const loader = new TensorLoader(store, api);
  loader.open({ source: 'graph', index: 1, output: null });
  loader.open({ source: 'graph', index: 2, output: null });
  gate.waiting[0]!.reject(new Error('late failure of tensor 1'));
  gate.waiting[1]!.resolve({ has_values: false, shape: null, nonfinite: null });
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(store.state.tensorView!.target.index, 2);
  assert.equal(store.state.tensorView!.summary.status, 'ready');
  loader.open({ source: 'graph', index: 3, output: null });
  gate.waiting[2]!.reject(new Error('HTTP 404: no trace 3'));
  inputs.waiting[2]!.reject(new Error('HTTP 404: no trace 3'));
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(
    [store.state.tensorView!.summary.status, store.state.tensorView!.summary.error],
    ['error', 'HTTP 404: no trace 3'],
  );
  assert.equal(store.state.tensorView!.inputs.status, 'error');
  loader.open({ source: 'graph', index: 4, output: null });
  loader.close();
  gate.waiting[3]!.resolve({ has_values: false, shape: null, nonfinite: null });
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(store.state.tensorView, null);
});

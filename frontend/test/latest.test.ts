/** controller/latest.ts: the latest request's answer is put (ready or failed), an earlier one's never. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attempt, Latest, settle } from '../src/controller/latest.ts';
import { Store, type Loadable } from '../src/store/store.ts';

test('an answer becomes ready, an error failed, while its request is the latest', async () => {
  const latest = new Latest();
  const put: Loadable<number>[] = [];
  await settle(Promise.resolve(7), latest.begin(), (v) => put.push(v));
  await settle(Promise.reject(new Error('HTTP 500: boom')), latest.begin(), (v) => put.push(v));
  assert.deepEqual(put, [
    { status: 'ready', data: 7, error: null },
    { status: 'error', data: null, error: 'HTTP 500: boom' },
  ]);
});

test('a newer request, or drop(), makes an earlier answer stale: it is never put', async () => {
  const latest = new Latest();
  const put: Loadable<string>[] = [];
  let answerFirst: (v: string) => void = () => {};
  const first = settle(new Promise<string>((r) => (answerFirst = r)), latest.begin(), (v) => put.push(v));
  const second = settle(Promise.resolve('second'), latest.begin(), (v) => put.push(v));
  await second;
  answerFirst('first, late');
  await first;
  assert.deepEqual(
    put.map((v) => v.data),
    ['second'],
  );
  const live = latest.begin();
  latest.drop();
  await settle(Promise.reject(new Error('late failure')), live, (v) => put.push(v));
  assert.equal(put.length, 1);
});

test('attempt: a step’s error goes to fail while live; a stale request’s error is dropped', async () => {
  const latest = new Latest();
  const failures: unknown[] = [];
  const fail = (e: unknown) => failures.push(e);
  const live = latest.begin();
  await attempt(async () => Promise.reject(new Error('first')), live, fail);
  const stale = latest.begin();
  latest.begin();
  await attempt(async () => Promise.reject(new Error('second')), stale, fail);
  assert.deepEqual(
    failures.map((e) => (e as Error).message),
    ['first'],
  );
});

test('beginForRun and current: a request holds while its run is shown; current() starts none', () => {
  const store = new Store();
  store.set({ run: 'a' });
  const latest = new Latest();
  const live = latest.beginForRun(store);
  const alsoLive = latest.current();
  assert.ok(live() && alsoLive());
  store.set({ run: 'b' });
  assert.ok(!live() && alsoLive());
  latest.drop();
  assert.ok(!alsoLive());
});

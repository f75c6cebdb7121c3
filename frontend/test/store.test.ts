import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../src/store/store.ts';
import { Controller } from '../src/controller/controller.ts';
import { decodeUrlState, encodeUrlState, type UrlState } from '../src/controller/url.ts';
import { routeUrl, HttpApi, ApiError } from '../src/api/client.ts';
import { FakeApi, memUrl, runInfo } from './fake_api.ts';
import { startController } from './fake_api.ts';
import { jumpError, timelineKeyTarget } from '../src/store/focus_math.ts';
import { CHOICE_WAIT_MS, waitForChoice } from '../src/controller/run_choice.ts';

const settle = () => new Promise((r) => setTimeout(r, 5));

test('start loads runs and selects the first run', async () => {
  const store = new Store();
  const api = new FakeApi();
  api.runsList = [runInfo('a', 10, 0), runInfo('b', 5, 0)];
  const ctl = new Controller(store, api, memUrl());
  await ctl.start();
  ctl.stop();
  assert.equal(store.state.run, 'a');
  assert.equal(store.state.runs.status, 'ready');
  assert.equal(store.runInfo()!.counts.graph_executions, 10);
});

test('a logdir of many runs opens on the run whose first NaN is earliest, not the alphabetically first', async () => {
  const store = new Store();
  const api = new FakeApi();
  api.runsList = [runInfo('a_clean', 10, 0), runInfo('b', 10, 3, true, 50), runInfo('c', 10, 9, true, 20)];
  const url = memUrl();
  const ctl = new Controller(store, api, url);
  await ctl.start();
  ctl.stop();
  assert.equal(store.state.run, 'c');
});

test('with no first NaN known yet, no run opens (never one it would leave); the choice opens once known', async () => {
  const store = new Store();
  const api = new FakeApi();
  api.runsList = [runInfo('a_clean', 10, 0), runInfo('b', 10, 3, false), runInfo('c', 10, 0, false)];
  const ctl = new Controller(store, api, memUrl());
  const shown: string[] = [];
  store.subscribe((s) => {
    if (s.run !== null && shown.at(-1) !== s.run) shown.push(s.run);
  });
  await ctl.start();
  ctl.stop();
  // The summaries may still change the default: the panels say "Choosing the run to open…" (issue #30: b opened,
  // then c a second later).
  assert.equal(store.state.run, null);
  // Later polls: c turns out to hold the earliest NaN.
  api.runsList = [runInfo('a_clean', 10, 0), runInfo('b', 10, 3, true, 50), runInfo('c', 10, 9, true, 20)];
  await (ctl as unknown as { refreshRuns(): Promise<boolean> }).refreshRuns();
  assert.equal(store.state.run, 'c');
  assert.deepEqual(shown, ['c'], 'c is the first run shown');
  // A run the user picked stays picked.
  ctl.chooseRun('a_clean');
  api.runsList = [runInfo('a_clean', 10, 0), runInfo('b', 10, 3, true, 5), runInfo('c', 10, 9, true, 20)];
  await (ctl as unknown as { refreshRuns(): Promise<boolean> }).refreshRuns();
  assert.equal(store.state.run, 'a_clean');
});

test('the wait for the run choice ends: a URL run that exists, one run, or CHOICE_WAIT_MS', () => {
  const pending = [runInfo('a', 10, 0), runInfo('b', 10, 3, false)];
  assert.equal(waitForChoice(pending, null, 0), true);
  assert.equal(waitForChoice(pending, 'a', 0), false, 'the URL names a run: it opens at once');
  assert.equal(waitForChoice(pending, 'gone', 0), true, 'a run the logdir no longer holds does not count');
  assert.equal(waitForChoice([runInfo('b', 10, 3, false)], null, 0), false, 'one run: no choice to wait for');
  assert.equal(waitForChoice(pending, null, CHOICE_WAIT_MS), false, 'a huge dump indexing for minutes');
  assert.equal(waitForChoice([runInfo('a', 10, 0), runInfo('b', 10, 3)], null, 0), false, 'summaries known');
});

test('focusing an alert focuses trace, op, stack, innermost user frame and source line at once', async () => {
  const { store, api, url, ctl } = await startController();
  await ctl.focusAlert(api.alert());
  const s = store.state;
  assert.deepEqual(s.focus, { kind: 'graph_execution', index: 7 });
  assert.equal(s.alertIndex, 0);
  assert.equal(s.geScroll!.index, 7);
  assert.equal(s.op.data!.op_name, 'Log');
  assert.deepEqual(s.inputRows, [6], 'the probs trace right before the Log trace is tinted');
  assert.equal(s.frames.data!.length, 3);
  assert.equal(s.selectedFrameId, 'f1', 'innermost USER frame, not the TF internals');
  assert.deepEqual(s.source, { fileIndex: 0, line: 42 });
  assert.deepEqual(url.value, { run: 'a', focus: { kind: 'graph_execution', index: 7 }, alert: 0 });
  assert.ok(api.calls.includes('op Log 7'));
});

test('the URL restores run and focus', async () => {
  const store = new Store();
  const api = new FakeApi();
  const ctl = new Controller(
    store,
    api,
    memUrl({ run: 'b', focus: { kind: 'graph_execution', index: 3 }, alert: null }),
  );
  await ctl.start();
  ctl.stop();
  await settle();
  assert.equal(store.state.run, 'b');
  assert.deepEqual(store.state.focus, { kind: 'graph_execution', index: 3 });
  assert.equal(store.state.op.data?.op_name, 'Log');
});

test('an unknown run in the URL falls back to the first run', async () => {
  const store = new Store();
  const ctl = new Controller(
    store,
    new FakeApi(),
    memUrl({ run: 'zzz', focus: { kind: 'graph_execution', index: 3 }, alert: null }),
  );
  await ctl.start();
  ctl.stop();
  assert.equal(store.state.run, 'a');
  assert.equal(store.state.focus, null);
});

test('navigating to an untraced op says so instead of selecting nothing', async () => {
  const { store, ctl } = await startController();
  await ctl.focusGraphExecution(7);
  await ctl.navigateToOp('g1', 'dense/kernel');
  assert.match(store.state.hint!, /no trace/);
  assert.deepEqual(store.state.focus, { kind: 'graph_execution', index: 7 }, 'focus stays');
  await ctl.navigateToOp('g1', 'probs');
  assert.deepEqual(store.state.focus, { kind: 'graph_execution', index: 6 }, 'nearest probs trace to 7');
  assert.equal(store.state.hint, null);
});

test("an untraced op of a JAX run is said in the JAX writer's words, never TensorFlow's", async () => {
  const store = new Store();
  const api = new FakeApi();
  api.runsList = [{ ...runInfo('a', 10, 1), framework: 'jax' }];
  const ctl = new Controller(store, api, memUrl());
  await ctl.start();
  ctl.stop();
  await ctl.navigateToOp('g1', 'dense/kernel');
  assert.match(store.state.hint!, /^dense\/kernel has no trace: the JAX writer did not record/);
  assert.doesNotMatch(store.state.hint!, /TensorFlow/);
});

test('a stale focus response is dropped', async () => {
  const store = new Store();
  const api = new FakeApi();
  // The first focus's detail answers last: without the controller's staleness guard it would overwrite the second.
  api.delayMs = (call) => (call === 'graph_execution 1' ? 30 : 0);
  const ctl = new Controller(store, api, memUrl());
  await ctl.start();
  ctl.stop();
  const first = ctl.focusGraphExecution(1);
  const second = ctl.focusGraphExecution(3);
  await Promise.all([first, second]);
  assert.deepEqual(
    api.calls.filter((c) => c.startsWith('graph_execution ')),
    ['graph_execution 1', 'graph_execution 3'],
  );
  assert.deepEqual(store.state.focus, { kind: 'graph_execution', index: 3 });
  assert.equal((store.state.focusDetail.data as { index: number }).index, 3);
  assert.equal(store.state.op.data?.op_name, 'Log', 'the op of trace 3, not a late one of trace 1');
});

test('live: polling picks up new counts without dropping focus', async () => {
  const store = new Store();
  const api = new FakeApi();
  api.runsList = [runInfo('a', 10, 1, false)];
  const ctl = new Controller(store, api, memUrl());
  await ctl.start();
  await ctl.focusGraphExecution(7);
  api.runsList = [runInfo('a', 20, 2, false)];
  await new Promise((r) => setTimeout(r, 1200));
  ctl.stop();
  assert.equal(store.runInfo()!.counts.graph_executions, 20);
  assert.deepEqual(store.state.focus, { kind: 'graph_execution', index: 7 });
});

test('a failed poll keeps the last good runs', async () => {
  const { store, api, ctl } = await startController();
  api.runs = async () => {
    throw new ApiError('network', 'down', 0);
  };
  await (ctl as unknown as { refreshRuns(): Promise<boolean> }).refreshRuns();
  assert.equal(store.state.runs.status, 'ready');
  assert.equal(store.state.runs.error, 'down');
  assert.equal(store.state.run, 'a');
});

test('url state round-trips and ignores garbage', () => {
  const s: UrlState = { run: 'dir/x#ab', focus: { kind: 'execution', index: 12 }, alert: 3 };
  assert.deepEqual(decodeUrlState(encodeUrlState(s)), s);
  assert.deepEqual(decodeUrlState('#run=a&ge=-1&alert=x'), { run: 'a', focus: null, alert: null });
  assert.deepEqual(decodeUrlState(''), { run: null, focus: null, alert: null });
});

test('client builds query strings and maps error bodies to ApiError', async () => {
  assert.equal(
    routeUrl('graph_executions', { run: 'a b', begin: 0, end: 10, op_type: '', only_nonfinite: false }),
    'graph_executions?run=a+b&begin=0&end=10',
  );
  const api = new HttpApi(async () => ({
    ok: false,
    status: 404,
    text: async () => '{"error":{"code":"not_found","message":"no run x"}}',
  }));
  await assert.rejects(api.runs(), (e: unknown) => e instanceof ApiError && e.code === 'not_found' && e.status === 404);
  const bad = new HttpApi(async () => ({ ok: false, status: 500, text: async () => '<html>' }));
  await assert.rejects(bad.runs(), (e: unknown) => e instanceof ApiError && e.code === 'bad_response');
  const urls: string[] = [];
  const ok = new HttpApi(async (u) => {
    urls.push(u);
    return { ok: true, status: 200, text: async () => '{"run":"a","frames":[]}' };
  });
  const ids = Array.from({ length: 450 }, (_, i) => `id${i}`);
  await ok.stackFrames('a', ids);
  assert.equal(urls.length, 3, 'long id lists are split under the cap');
});

test('timeline keys: arrows, PageUp/PageDown by a window, Home/End, clamped at the ends', () => {
  assert.equal(timelineKeyTarget('ArrowRight', 5, 0, 40, 100), 6);
  assert.equal(timelineKeyTarget('ArrowLeft', 0, 0, 40, 100), 0);
  assert.equal(timelineKeyTarget('PageDown', 5, 0, 40, 100), 45);
  assert.equal(timelineKeyTarget('PageDown', 90, 60, 40, 100), 99);
  assert.equal(timelineKeyTarget('PageUp', 45, 40, 40, 100), 5);
  assert.equal(timelineKeyTarget('Home', 45, 40, 40, 100), 0);
  assert.equal(timelineKeyTarget('End', 45, 40, 40, 100), 99);
  assert.equal(timelineKeyTarget('ArrowRight', null, 40, 40, 100), 40, 'no focus: the window first box');
  assert.equal(timelineKeyTarget('x', 5, 0, 40, 100), null);
  assert.equal(timelineKeyTarget('Home', null, 0, 40, 0), null);
});

test('browser Back steps back one focus (history entries per focus), and the in-app back does the same', async () => {
  const { store, url, ctl } = await startController();
  await ctl.focusGraphExecution(7);
  await ctl.focusGraphExecution(3);
  await ctl.focusGraphExecution(5);
  assert.equal(store.state.canGoBack, true);
  url.back(); // the browser's Back
  await settle();
  assert.deepEqual(store.state.focus, { kind: 'graph_execution', index: 3 });
  ctl.back(); // the in-app back button
  await settle();
  assert.deepEqual(store.state.focus, { kind: 'graph_execution', index: 7 });
  assert.equal(url.history.length, 0, 'restoring a focus pushes no entry of its own');
  assert.equal(store.state.canGoBack, false, 'the first focus of the run replaced the entry: nothing before it');
});

test('showing a trace the filters hide clears them, and says so', async () => {
  const { store, ctl } = await startController();
  ctl.setFilters({ opType: 'Softmax' });
  assert.equal(store.state.listNote, null);
  await settle();
  await ctl.focusGraphExecution(7); // a Log trace: not in the Softmax list
  assert.deepEqual(store.state.geFilters, {});
  assert.match(store.state.listNote ?? '', /Filters cleared to show trace #7/);
  ctl.setFilters({ opType: 'Log' });
  assert.equal(store.state.listNote, null);
});

test('go-to-# is validated: a bad number is an inline message, not a silent no-op', () => {
  assert.equal(jumpError('12', 282), null);
  assert.equal(jumpError('0', 282), null);
  assert.match(jumpError('282', 282)!, /0–281/);
  assert.match(jumpError('-1', 282)!, /0–281/);
  assert.match(jumpError('abc', 282)!, /whole number/);
  assert.match(jumpError('', 282)!, /whole number/);
  assert.match(jumpError('3', 0)!, /no trace/);
});

test('n then p pressed fast: p starts from where n went', async () => {
  const store = new Store();
  const api = new FakeApi();
  api.runsList = [runInfo('a', 10, 3)];
  api.alertCount = 3;
  const ctl = new Controller(store, api, memUrl());
  await ctl.start();
  ctl.stop();
  const first = ctl.stepAlert(1);
  const second = ctl.stepAlert(-1);
  await Promise.all([first, second]);
  await settle();
  assert.equal(store.state.alertIndex, 0, 'p from the first alert stays on it, not the last alert');
});

test('a permalink keeps the opened call and the timeline window', async () => {
  const state = {
    run: 'a',
    focus: { kind: 'graph_execution' as const, index: 7 },
    alert: null,
    call: 4,
    timeline: 120,
  };
  const text = encodeUrlState(state);
  assert.match(text, /call=4/);
  assert.match(text, /tl=120/);
  assert.deepEqual(decodeUrlState(text), state);
  assert.deepEqual(decodeUrlState('run=a&call=-1&tl=x'), { run: 'a', focus: null, alert: null }); // malformed: ignored
  const url = memUrl({ run: 'a', focus: { kind: 'graph_execution', index: 7 }, alert: null, call: 4 });
  const { store, api } = await startController(url);
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(store.state.geFilters.call, 4);
  assert.ok(
    api.calls.some((c) => c.startsWith('graph_executions a') && c.endsWith('call 4')),
    api.calls.join('\n'),
  );
  assert.equal(url.value.call, 4, 'the URL still holds the call');
});

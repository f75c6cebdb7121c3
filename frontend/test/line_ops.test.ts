/**
 * Source Code's op markers through the controller: a file shown brings its per-line op counts; a marker opens its
 * line's list (paged); an op of the list is focused through the controller's focus chain.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../src/store/store.ts';
import { Controller } from '../src/controller/controller.ts';
import { LINE_OPS_PAGE, mergePage } from '../src/controller/line_ops_loader.ts';
import type { LineOp } from '../src/api/wire.ts';
import { FakeApi, memUrl, runInfo } from './fake_api.ts';

const settle = () => new Promise((r) => setTimeout(r, 5));

async function focusedOnLine42(api = new FakeApi()) {
  api.sourceText = Array.from({ length: 50 }, (_, i) => `line ${i + 1}`);
  const store = new Store();
  const ctl = new Controller(store, api, memUrl());
  await ctl.start();
  ctl.stop();
  await ctl.focusAlert(api.alert()); // its innermost user frame is /u/train.py:42
  await settle();
  return { store, ctl, api };
}

test('a file shown brings its per-line op counts; a new line in the same file does not fetch them again', async () => {
  const { store, ctl, api } = await focusedOnLine42();
  const counts = store.state.sourceLineCounts;
  assert.equal(counts.status, 'ready');
  assert.deepEqual(counts.data!.lines, [{ line: 42, ops: 2, direct: 1, nonfinite: 1 }]);
  assert.equal(api.calls.filter((c) => c === 'source_line_counts 0').length, 1);
  ctl.selectFrame(api.frames[0]!); // line 10 of the same file
  await settle();
  assert.equal(api.calls.filter((c) => c === 'source_line_counts 0').length, 1);
  assert.equal(store.state.source!.line, 10);
});

test('a marker opens its line’s ops; the same marker closes them; another file closes them', async () => {
  const { store, ctl, api } = await focusedOnLine42();
  ctl.lineOps.toggle(42);
  assert.equal(store.state.lineOps!.list.status, 'loading');
  await settle();
  const view = store.state.lineOps!;
  assert.deepEqual([view.fileIndex, view.line], [0, 42]);
  assert.deepEqual(
    view.list.data!.rows.map((r) => r.op_name),
    ['Log', 'probs'],
  );
  assert.ok(api.calls.includes(`line_ops 0 42 0 ${LINE_OPS_PAGE}`));
  ctl.lineOps.toggle(42);
  assert.equal(store.state.lineOps, null);
  ctl.lineOps.toggle(42);
  await settle();
  ctl.selectSourceFile(1);
  assert.equal(store.state.lineOps, null, 'a list belongs to the file it was opened in');
});

test('clicking a non-finite op focuses its first non-finite trace; the list closes', async () => {
  const { store, ctl } = await focusedOnLine42();
  ctl.selectFrame({ ...store.state.frames.data![0]! }); // somewhere else first: line 10
  ctl.lineOps.toggle(42);
  await settle();
  const log = store.state.lineOps!.list.data!.rows[0]!;
  await ctl.lineOps.focusOp(log);
  await settle();
  const s = store.state;
  assert.equal(s.lineOps, null);
  assert.deepEqual(s.focus, { kind: 'graph_execution', index: 7 });
  assert.equal(s.op.data!.op_name, 'Log');
  assert.equal(s.geScroll!.index, 7);
  assert.deepEqual(s.source, { fileIndex: 0, line: 42 }, 'Stack Trace and Source Code follow the op');
});

test('clicking an op with no non-finite trace navigates to it as Graph Structure does', async () => {
  const { store, ctl, api } = await focusedOnLine42();
  ctl.lineOps.toggle(42);
  await settle();
  const probs = store.state.lineOps!.list.data!.rows[1]!;
  await ctl.lineOps.focusOp(probs);
  await settle();
  assert.equal(store.state.op.data!.op_name, 'probs');
  assert.ok(api.calls.includes('op probs 7'), 'its trace nearest the focus is asked for');
});

test('more pages are appended; a line past its last page asks for nothing', async () => {
  const api = new FakeApi();
  const row = (i: number): LineOp => ({ ...api.lineOpRows[1]!, op_name: `op${i}` });
  api.lineOpRows = Array.from({ length: LINE_OPS_PAGE + 7 }, (_, i) => row(i));
  const { store, ctl } = await focusedOnLine42(api);
  ctl.lineOps.toggle(42);
  await settle();
  assert.equal(store.state.lineOps!.list.data!.rows.length, LINE_OPS_PAGE);
  ctl.lineOps.more();
  await settle();
  const got = store.state.lineOps!.list.data!;
  assert.equal(got.rows.length, LINE_OPS_PAGE + 7);
  assert.equal(got.rows.at(-1)!.op_name, `op${LINE_OPS_PAGE + 6}`);
  assert.deepEqual([got.begin, got.end, got.total], [0, LINE_OPS_PAGE + 7, LINE_OPS_PAGE + 7]);
  const calls = api.calls.length;
  ctl.lineOps.more();
  await settle();
  assert.equal(api.calls.length, calls);
});

test('a live run whose ops grew asks for the shown file’s counts again', async () => {
  const api = new FakeApi();
  const { store, ctl } = await focusedOnLine42(api);
  const grown = runInfo('a', 10, 1);
  grown.counts.ops += 5;
  api.runsList = [grown, api.runsList[1]!];
  await (ctl as unknown as { refreshRuns(): Promise<boolean> }).refreshRuns();
  await settle();
  assert.equal(api.calls.filter((c) => c === 'source_line_counts 0').length, 2);
  assert.equal(store.state.sourceLineCounts.status, 'ready');
});

test('mergePage appends a following page and replaces on a gap', () => {
  const base = { run: 'a', index: 0, line: 3, total: 4, direct: 0, nonfinite: 0 };
  const one = (name: string) => ({ ...new FakeApi().lineOpRows[1]!, op_name: name });
  const first = { ...base, begin: 0, end: 2, rows: [one('a'), one('b')] };
  const next = { ...base, begin: 2, end: 4, rows: [one('c'), one('d')] };
  assert.deepEqual(
    mergePage(first, next).rows.map((r) => r.op_name),
    ['a', 'b', 'c', 'd'],
  );
  assert.equal(mergePage(first, { ...next, begin: 3 }).begin, 3);
});

/** Opening a tf.function call from the timeline: Graph Execution lists its traces, its first NaN/∞ is focused at
 * its place in that list, Graph Structure draws; closing the call lists every trace again. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startController } from './fake_api.ts';

const settle = () => new Promise((r) => setTimeout(r, 0));

test('openCall filters to the call, focuses its first NaN/∞ at its list position and draws the graph', async () => {
  const { store, api, ctl } = await startController();
  await settle();
  await ctl.openCall(4);
  await settle();
  const s = store.state;
  assert.equal(s.geFilters.call, 4);
  assert.equal(s.openedCall?.graph_name, 'step');
  assert.deepEqual(s.focus, { kind: 'graph_execution', index: 7 });
  assert.equal(s.geScroll?.position, 2, 'trace 7 is the third of the call (5..9): not a cleared filter');
  assert.equal(s.listNote, null, 'no "filters cleared" note: the call stays open');
  assert.equal(s.graphView.mode, 'drawn');
  assert.ok(api.calls.includes('graph_executions a 0 1 call 4'), api.calls.join('\n'));
  ctl.loadGraphExecutionRows(0, 10);
  await settle();
  assert.deepEqual(
    Array.from({ length: 5 }, (_, i) => store.state.geRows.item(i)?.index),
    [5, 6, 7, 8, 9],
  );
  ctl.setFilters({ ...store.state.geFilters, call: undefined });
  assert.equal(store.state.openedCall, null);
  assert.equal(store.state.geFilters.call, undefined);
});

test('the op type filter typed while a call is open keeps the call', async () => {
  const { store, ctl } = await startController();
  await settle();
  await ctl.openCall(4);
  ctl.setFilters({ ...store.state.geFilters, onlyNonfinite: true });
  await settle();
  assert.equal(store.state.geFilters.call, 4);
  assert.ok(store.state.openedCall !== null);
});

test('the minimap says when alerts come after the last execution record', async () => {
  const { afterLastText } = await import('../src/panels/timeline/minimap.ts');
  assert.equal(afterLastText(null), '');
  assert.equal(afterLastText({ alerts: 5, after_last: 0 }), '');
  assert.match(afterLastText({ alerts: 3, after_last: 3 }), /every alert \(3 alerts\) comes after the last execution/);
  assert.equal(afterLastText({ alerts: 10, after_last: 1 }), '+ 1 alert after the last execution record');
});

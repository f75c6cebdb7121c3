/** The dashboard's first load, short of the DOM: what render() wires (a store, a controller over the API) ends with
 * every panel's first data in the store. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as entry from '../src/index.ts';
import { startController } from './fake_api.ts';

const settle = () => new Promise((r) => setTimeout(r, 5));

test('entry module exports render()', () => {
  assert.equal(typeof entry.render, 'function');
});

test('first load: the runs answer brings every panel its first data, and nothing the first paint does not need', async () => {
  const { store, api, ctl } = await startController();
  await settle();
  const s = store.state;
  assert.equal(api.calls[0], 'runs', 'runs is asked first');
  assert.equal(s.run, 'a');
  assert.equal(s.alertType, 'InfNanAlert', 'Alerts opens the first type with alerts');
  assert.equal(s.alertRows.total, 1);
  assert.equal(s.alertRows.item(0)?.source_index, 7);
  assert.equal(s.rootCause.status, 'ready');
  assert.equal(s.geRows.total, 10);
  assert.equal(s.geRows.item(7)?.op_name, 'Log');
  assert.deepEqual(s.opTypes, ['Softmax', 'Log'], 'the op type filter suggests what the fetched rows hold');
  assert.equal(s.timeline.page.status, 'ready');
  assert.ok(api.calls.includes('executions a 0 40'));
  assert.equal(s.sourceFiles.status, 'idle', 'the file list waits for the first paint');
  assert.ok(!api.calls.some((c) => c.startsWith('timeline_marks a')), 'so do the minimap marks');
  assert.equal(s.focus, null);
  ctl.firstPaintDone();
  await settle();
  assert.equal(store.state.sourceFiles.status, 'ready');
  assert.ok(api.calls.includes('timeline_marks a 1000'), 'the minimap asks for every alert, binned');
});

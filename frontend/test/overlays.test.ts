import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startController } from './fake_api.ts';

test('Escape closes the topmost overlay, one at a time, skipping those closed another way', async () => {
  const { store, ctl } = await startController();
  const closed: string[] = [];
  let capsulesShown = true;
  ctl.overlays.opened('capsules', () => {
    if (!capsulesShown) return false;
    capsulesShown = false;
    closed.push('capsules');
    return true;
  });
  ctl.overlays.opened('help', () => (closed.push('help'), true));
  ctl.tensors.open({ source: 'graph', index: 3, output: null }); // followed from the store
  assert.deepEqual(store.state.overlays, ['capsules', 'help', 'tensor']);
  assert.equal(ctl.overlays.closeTop(), true);
  assert.equal(store.state.tensorView, null, 'Tensor Values first: the last opened');
  assert.deepEqual(store.state.overlays, ['capsules', 'help']);
  assert.equal(ctl.overlays.closeTop(), true);
  assert.deepEqual(closed, ['help']);
  capsulesShown = false; // hidden by its own button, its entry left: Escape does not spend a press on it
  assert.equal(ctl.overlays.closeTop(), false);
  assert.deepEqual(store.state.overlays, []);
  ctl.overlays.opened('help', () => true);
  ctl.overlays.opened('capsules', () => true);
  ctl.overlays.opened('help', () => true); // opened again: on top again, once
  assert.deepEqual(store.state.overlays, ['capsules', 'help']);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeUrlState, encodeUrlState } from '../src/controller/url.ts';
import { muteFor, mutesParam, parseMutes } from '../src/store/mutes.ts';
import { FakeApi, startController } from './fake_api.ts';

test('a mute by op name escapes the name: it matches that op only', () => {
  const a = new FakeApi().alert();
  const m = muteFor({ ...a, op_name: 'loss/mul[1]*' }, 'op_name', 'why');
  assert.deepEqual(m, { op_name: 'loss/mul[[]1[]][*]', reason: 'why' });
  assert.equal(muteFor({ ...a, op_name: null }, 'op_name', 'x'), null);
  assert.deepEqual(muteFor(a, 'rule', ''), { rule: 'InfNanAlert', reason: '' });
});

test('mutes round-trip through the URL; malformed ones are dropped, not trusted', () => {
  const mutes = [{ op_type: 'Log', reason: 'r, with & and #' }];
  const s = decodeUrlState(encodeUrlState({ run: 'a', focus: null, alert: null, mutes }));
  assert.deepEqual(s.mutes, mutes);
  assert.deepEqual(parseMutes('[{"reason": "only"}, 3, {"op_name": 7}, {"graph_id": "g", "x": 1}]'), [
    { graph_id: 'g', reason: '' },
  ]);
  assert.equal(parseMutes('not json'), null);
  assert.equal(mutesParam([]), undefined);
});

test('muting and un-muting send the mutes with the alerts, the summary and the root cause, and the URL keeps them', async () => {
  const { store, api, url, ctl } = await startController();
  ctl.rules.addMute({ op_type: 'Log', reason: 'benign' });
  await new Promise((r) => setTimeout(r, 5));
  const param = JSON.stringify([{ op_type: 'Log', reason: 'benign' }]);
  assert.ok(api.calls.includes(`root_cause a ${param}`), api.calls.join('\n'));
  assert.ok(api.calls.includes(`alerts a 0 0  ${param}`), api.calls.join('\n'));
  assert.deepEqual(url.read().mutes, [{ op_type: 'Log', reason: 'benign' }]);
  assert.deepEqual(store.state.alertSummary.data?.muted.by_mute, [1]);
  ctl.rules.removeMute(0);
  await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(store.state.mutes, []);
  assert.equal(url.read().mutes, undefined);
  assert.equal(api.calls.at(-1)?.includes(param), false);
});

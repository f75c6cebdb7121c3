import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CapsuleInfo } from '../src/api/wire.ts';
import { capsuleLanding } from '../src/panels/capsules/capsule_landing.ts';
import { runInfo } from './fake_api.ts';

function capsule(captured: number | null, replayRun: string | null = null): CapsuleInfo {
  return { path: `capsule-${captured}`, status: 'ok', replay_run: replayRun, captured_time: captured };
}

test('the capsules are all there is, or every run is their replay: the dashboard lands on them', () => {
  assert.equal(capsuleLanding([capsule(5)], []), 'capsules');
  assert.equal(capsuleLanding([capsule(5, 'c/replay')], [runInfo('c/replay', 3, 1, true, 900)]), 'capsules');
  assert.equal(capsuleLanding([], [runInfo('a', 3, 1)]), 'runs');
});

test("a capsule newer than every run's first NaN wins; older than one of them, the runs' root cause does", () => {
  const runs = [runInfo('a', 3, 1, true, 100), runInfo('b', 3, 1, true, 200), runInfo('clean', 3, 0)];
  assert.equal(capsuleLanding([capsule(150), capsule(250)], runs), 'capsules'); // the newest capsule counts
  assert.equal(capsuleLanding([capsule(150)], runs), 'runs');
  assert.equal(capsuleLanding([capsule(200)], runs), 'runs'); // not newer: as without capsules
  assert.equal(capsuleLanding([capsule(1)], [runInfo('clean', 3, 0)]), 'capsules'); // no first NaN to outrank it
  assert.equal(capsuleLanding([capsule(null)], runs), 'runs'); // no time: as without capsules
});

test('a run still being read has no first NaN yet: the landing waits for it', () => {
  const runs = [runInfo('a', 3, 1, true, 100), runInfo('late', 3, 1, false)];
  assert.equal(capsuleLanding([capsule(150)], runs), 'wait');
  assert.equal(capsuleLanding([capsule(150, 'late')], runs), 'capsules'); // a replay's own run is not waited for
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runLabel, runStatusText } from '../src/runs_overview.ts';
import { runInfo } from './fake_api.ts';

test('the picker says what each run holds: alerts, clean, indexing n %, analyzing, no NaN/∞ info', () => {
  assert.equal(runLabel(runInfo('a', 10, 165)), 'a — 165 alerts');
  assert.equal(runLabel(runInfo('a', 10, 1)), 'a — 1 alert');
  assert.equal(runLabel(runInfo('clean', 10, 0)), 'clean — clean');
  const warned = runInfo('w', 10, 0);
  warned.summary = { status: 'clean', first_nan: null, rule_findings: 3 };
  assert.equal(runStatusText(warned), 'no NaN/∞, 3 rule findings', 'a run with only rule findings is not clean');
  warned.summary = { status: 'clean', first_nan: null };
  assert.equal(runStatusText(warned), 'no NaN/∞', 'not called clean before its rules are judged');
  const reading = runInfo('big', 10, 0, false);
  reading.status.bytes_read = 41;
  reading.status.bytes_total = 100;
  assert.equal(runLabel(reading), 'big — indexing 41 %');
  const analyzing = runInfo('x', 10, 0);
  analyzing.summary = { status: 'analyzing', first_nan: null };
  assert.equal(runStatusText(analyzing), 'analyzing');
  const shape = runInfo('s', 10, 0);
  shape.summary = { status: 'unknown', first_nan: null };
  assert.equal(runStatusText(shape), 'no NaN/∞ info', 'a mode that records no values is not called clean');
  const broken = runInfo('b', 10, 2);
  broken.status.notices = [{ code: 'unreadable_file', severity: 'error', message: 'x', file: 'f' }];
  assert.equal(runLabel(broken), 'b — 2 alerts (errors)');
});

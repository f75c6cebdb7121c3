import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readiness } from '../src/ready.ts';
import { noRunState, progressText, reasonFrom } from '../src/widgets/notices.ts';
import { clampFraction } from '../src/widgets/splitter.ts';
import { letterOf, shortName } from '../src/panels/timeline/timeline.ts';
import { runInfo } from './fake_api.ts';

const tick = (ms = 80) => new Promise((r) => setTimeout(r, ms));

test('ready fires once runs rendered and every begun load ended', async () => {
  let fired = 0;
  const r = new Readiness(() => fired++);
  r.begin('ge');
  r.runsRendered();
  await tick();
  assert.equal(fired, 0, 'a panel is still loading');
  r.begin('alerts');
  r.end('ge');
  await tick();
  assert.equal(fired, 0);
  r.end('alerts');
  await tick();
  assert.equal(fired, 1);
  r.begin('x');
  r.end('x');
  await tick();
  assert.equal(fired, 1, 'fires once');
  assert.ok(r.isReady);
});

test('ready waits for runs even when no panel loads', async () => {
  let fired = 0;
  const r = new Readiness(() => fired++);
  await tick();
  assert.equal(fired, 0);
  r.runsRendered();
  await tick();
  assert.equal(fired, 1);
});

test('afterReady work waits for the ready marker, then runs at once', async () => {
  const order: string[] = [];
  const r = new Readiness(() => order.push('ready'));
  r.afterReady(() => order.push('minimap'));
  r.begin('ge');
  r.runsRendered();
  await tick();
  assert.equal(order.join(','), '', 'deferred work must not start before the first paint');
  r.end('ge');
  await tick();
  assert.equal(order.join(','), 'ready,minimap');
  r.afterReady(() => order.push('late'));
  assert.equal(order.join(','), 'ready,minimap,late');
});

test('a load begun by a listener of the same update holds ready back', async () => {
  let fired = 0;
  const r = new Readiness(() => fired++);
  r.runsRendered(); // the header's listener runs first; a panel's listener begins its load right after
  r.begin('alerts');
  await tick();
  assert.equal(fired, 0);
  r.end('alerts');
  await tick();
  assert.equal(fired, 1);
});

test('empty-state reasons come from the API notices', () => {
  const info = runInfo('a', 0, 0, false);
  info.status.notices = [{ code: 'circular_buffer', severity: 'info', message: 'Written with a circular buffer.' }];
  assert.equal(
    reasonFrom(info, ['circular_buffer'], 'x'),
    'Written with a circular buffer. (still indexing; this updates live)',
  );
  info.status.done = true;
  assert.equal(reasonFrom(info, ['no_executions'], 'No executions.'), 'No executions.');
  info.status.done = false;
  info.status.bytes_read = 50;
  info.status.bytes_total = 200;
  assert.match(progressText(info), /^indexing 25%/);
  assert.equal(progressText(null), '');
  assert.deepEqual(noRunState({ runs: { status: 'loading', data: null, error: null } }), { kind: 'loading' });
  assert.deepEqual(noRunState({ runs: { status: 'error', data: null, error: 'down' } }), {
    kind: 'error',
    text: 'Cannot load runs: down',
  });
  // One message per empty state: the header's status line says why (where it looked, how to write a dump); the six
  // panels say it briefly instead of repeating it six times.
  const empty = noRunState({ runs: { status: 'ready', data: { logdir: '/l', runs: [], notices: [] }, error: null } });
  assert.deepEqual(empty, { kind: 'empty', text: 'No tfdbg2 dump to show (the status line above says why).' });
  const why = noRunState({
    runs: {
      status: 'ready',
      data: {
        logdir: '/l',
        runs: [],
        notices: [{ code: 'no_dump_found', severity: 'info', message: 'Looked everywhere.' }],
      },
      error: null,
    },
  });
  assert.deepEqual(why, { kind: 'empty', text: 'No tfdbg2 dump to show (the status line above says why).' });
  const scanning = noRunState({
    runs: {
      status: 'ready',
      data: { logdir: '/l', runs: [], notices: [{ code: 'scanning', severity: 'info', message: 'Scanning /l…' }] },
      error: null,
    },
  });
  assert.deepEqual(scanning, { kind: 'loading' });
});

test('splitter fractions keep both panes usable', () => {
  assert.equal(clampFraction(0.5, 1000, 80), 0.5);
  assert.equal(clampFraction(0.01, 1000, 80), 0.08);
  assert.equal(clampFraction(0.99, 1000, 80), 0.92);
  assert.equal(clampFraction(0.9, 100, 80), 0.5);
});

test('timeline letters name functions without TF prefixes', () => {
  assert.equal(shortName('__inference_train_step_229'), 'train_step');
  assert.equal(letterOf('__inference_train_step_229'), 'T');
  assert.equal(letterOf('MatMul'), 'M');
  assert.equal(letterOf(''), '?');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { baseName, foldStack } from '../src/panels/stack_trace/fold.ts';
import { shortPaths } from '../src/widgets/paths.ts';
import { innermostUserFrame, nearestIndex, inputRowsOf } from '../src/store/focus_math.ts';
import type { OpInfo, StackFrame } from '../src/api/wire.ts';

const f = (id: string, is_user: boolean, path: string | null = `/x/${id}.py`): StackFrame => ({
  id,
  host: 'h',
  path,
  line: 1,
  function: 'fn',
  source_index: 0,
  is_user,
});

test('consecutive library frames fold; user frames stay; order is kept', () => {
  const frames = [
    f('u0', true),
    f('l1', false),
    f('l2', false),
    f('l3', false),
    f('u4', true),
    f('l5', false),
    f('u6', true),
    f('l7', false),
    f('l8', false),
  ];
  const items = foldStack(frames);
  assert.deepEqual(
    items.map((i) => (i.kind === 'frame' ? i.frame.id : `fold${i.frames.length}`)),
    ['u0', 'fold3', 'u4', 'l5', 'u6', 'fold2'],
  );
  assert.deepEqual(foldStack([]), []);
  const all = foldStack([f('a', false), f('b', false)]);
  assert.equal(all.length, 1);
  assert.equal(all[0]!.kind, 'fold');
});

test('innermost user frame is the last user frame (frames are outermost first)', () => {
  assert.equal(innermostUserFrame([f('u0', true), f('u1', true), f('l2', false)])!.id, 'u1');
  assert.equal(innermostUserFrame([f('l0', false), f('l1', false)])!.id, 'l1');
  assert.equal(innermostUserFrame([]), null);
});

test('baseName and nearestIndex', () => {
  assert.equal(baseName('/a/b/c.py'), 'c.py');
  assert.equal(baseName(null), '(source not yet read)');
  assert.equal(nearestIndex([], 5), null);
  assert.equal(nearestIndex([1, 9, 20], 12), 9);
  assert.equal(nearestIndex([1, 9, 20], null), 1);
});

test('input rows pick each input trace at or before the focus', () => {
  const op = {
    inputs: [
      { slot: 0, op_name: 'a', output_slot: 0, op: null, traces: { count: 3, indices: [2, 10, 30] } },
      { slot: 1, op_name: 'b', output_slot: 0, op: null, traces: { count: 0, indices: [] } },
    ],
  } as unknown as OpInfo;
  assert.deepEqual(inputRowsOf(op, 12), [10]);
});

test('source paths are shortened for the file picker', () => {
  const paths = [
    '/home/me/proj/train.py',
    '/home/me/proj/model/net.py',
    '/usr/lib/python3/dist-packages/tensorflow/python/ops/math_ops.py',
    '/venv/lib/python3.11/site-packages/keras/src/layers/dense.py',
    '/usr/lib/python3.11/contextlib.py',
  ];
  assert.deepEqual(shortPaths(paths, [true, true, false, false, false]), [
    'train.py',
    'model/net.py',
    'tensorflow/python/ops/math_ops.py',
    'keras/src/layers/dense.py',
    'contextlib.py',
  ]);
  assert.deepEqual(shortPaths(['/a/b/only.py'], [true]), ['only.py']);
});

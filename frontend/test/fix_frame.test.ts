/** The line the root-cause card points at: the forward op's for a gradient, the dataset's for data, else its own. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixFrame } from '../src/store/focus_math.ts';
import type { RootCauseProducer, StackFrame } from '../src/api/wire.ts';

const frame = (line: number): StackFrame => ({
  id: `f${line}`,
  path: '/x/train.py',
  source_index: 0,
  line,
  function: 'step',
  host: 'h',
  is_user: true,
});

function producer(extra: Partial<RootCauseProducer>): RootCauseProducer {
  return { user_frame: frame(17), forward: null, data: null, ...extra } as RootCauseProducer;
}

test('a gradient op points at its forward op line', () => {
  const p = producer({ forward: { op_name: 'norm/Sqrt', op_type: 'Sqrt', user_frame: frame(15), source_line: null } });
  assert.equal(fixFrame(p)?.line, 15);
});

test('data points at the dataset line, a plain producer at its own line', () => {
  const data = {
    batch: 2,
    positions: null,
    note: '',
    source_op: 'TensorSliceDataset',
    source_line: null,
    born_in_pipeline: false,
  };
  assert.equal(fixFrame(producer({ data: { ...data, user_frame: frame(11) } }))?.line, 11);
  assert.equal(fixFrame(producer({}))?.line, 17);
  assert.equal(fixFrame(producer({ user_frame: null })), null);
});

test('a NaN born inside the pipeline points at its own line (the map function), not the dataset line', () => {
  const data = { batch: 2, positions: null, note: '', source_op: 'TensorSliceDataset', source_line: null };
  const born = { ...data, user_frame: frame(11), born_in_pipeline: true };
  assert.equal(fixFrame(producer({ data: born }))?.line, 17);
});

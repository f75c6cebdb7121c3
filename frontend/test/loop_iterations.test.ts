/** A JAX while loop's trace mask row in words (Graph Execution), from each mode's health. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TensorHealth } from '../src/api/wire.ts';
import { loopIterationsText } from '../src/panels/graph_execution/loop_iterations.ts';

const full = (size: number, pos: number): TensorHealth => ({
  mode: 'FULL_HEALTH',
  tensor_id: -1,
  device_id: -1,
  dtype: 'int32',
  rank: 1,
  size,
  neg_inf: 0,
  pos_inf: 0,
  nan: 0,
  neg: 0,
  zero: size - pos,
  pos,
});

test('a loop past its traced iterations says which were not traced', () => {
  assert.equal(loopIterationsText(full(1500, 100)), 'ran 1,500 iterations; iterations 101–1,500 not traced');
  assert.equal(loopIterationsText(full(5, 5)), 'ran 5 iterations, all traced');
  assert.equal(loopIterationsText(full(1, 1)), 'ran 1 iteration, all traced');
});

test('modes that record the size only, or nothing', () => {
  const concise: TensorHealth = { mode: 'CONCISE_HEALTH', tensor_id: -1, size: 150, neg_inf: 0, pos_inf: 0, nan: 0 };
  assert.equal(loopIterationsText(concise), 'ran 150 iterations; this mode does not record how many were traced');
  assert.equal(loopIterationsText({ mode: 'CURT_HEALTH', tensor_id: -1, any_inf_or_nan: false }), null);
});

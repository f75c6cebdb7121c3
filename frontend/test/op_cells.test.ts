import { test } from 'node:test';
import assert from 'node:assert/strict';
import { opCells } from '../src/widgets/op_cells.ts';

test('an op named after its type shows the type once, its name cell spanning the type column', () => {
  assert.deepEqual(opCells({ op_name: 'Log', op_type: 'Log' }), { name: 'Log', type: null, eager: false });
});

test('an eager op (no name) shows its type in the type column, not twice', () => {
  assert.deepEqual(opCells({ op_name: null, op_type: 'Log' }), { name: 'eager', type: 'Log', eager: true });
});

test('a named op shows its name and its type', () => {
  assert.deepEqual(opCells({ op_name: 'dense/MatMul', op_type: 'MatMul' }), {
    name: 'dense/MatMul',
    type: 'MatMul',
    eager: false,
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fitLabel, withinScope } from '../src/panels/graph_structure/label_fit.ts';

const measure = (text: string) => text.length * 6; // 6 px a character

test('labels are cut to their room: names keep their end, types their start', () => {
  assert.equal(fitLabel('MatMul', 60, '', measure, 'start'), 'MatMul');
  const name = 'gradient_tape/sequential/dense_1/MatMul_1';
  const cut = fitLabel(name, 60, '', measure, 'end');
  assert.equal(cut, '…/MatMul_1');
  assert.ok(measure(cut) <= 60 && name.endsWith(cut.slice(1)));
  const type = fitLabel('SparseSoftmaxCrossEntropyWithLogits', 90, '', measure, 'start');
  assert.equal(type, 'SparseSoftmaxC…');
  assert.ok(measure(type) <= 90);
  assert.equal(fitLabel('abc', 3, '', measure, 'start'), '…'); // nothing fits: only the ellipsis
});

test("an op drawn in its scope's box drops the scope's prefix", () => {
  assert.equal(withinScope('dense/MatMul', 'dense'), 'MatMul');
  assert.equal(withinScope('dense_1/MatMul', 'dense'), 'dense_1/MatMul'); // another scope
  assert.equal(withinScope('dense/', 'dense'), 'dense/');
  assert.equal(withinScope('dense/MatMul', null), 'dense/MatMul');
});

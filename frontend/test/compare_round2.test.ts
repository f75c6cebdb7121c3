import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shortOpName } from '../src/panels/graph_execution/graph_execution.ts';

test('long Keras op names are cut in the middle, keeping the last scopes whole', () => {
  assert.equal(shortOpName('dense/MatMul'), 'dense/MatMul');
  const keras = 'sequential/dense_1/compile_loss/sparse_categorical_crossentropy/MatMul';
  assert.equal(shortOpName(keras), '…/MatMul');
  assert.equal(shortOpName('sequential/dense_1/BiasAdd/ReadVariableOp_long'), '…/ReadVariableOp_long');
  assert.equal(shortOpName('sequential_model/dense_1/BiasAdd'), '…/dense_1/BiasAdd');
  const flat = 'a'.repeat(20) + 'b'.repeat(20);
  assert.ok(
    shortOpName(flat).startsWith('aaaa') && shortOpName(flat).endsWith('bbbb') && shortOpName(flat).includes('…'),
  );
});

test('the comparison travels in the permalink (cmp=) and back', async () => {
  const { decodeUrlState, encodeUrlState } = await import('../src/controller/url.ts');
  const text = encodeUrlState({ run: 'changed', focus: null, alert: null, cmp: 'base line' });
  assert.match(text, /cmp=base\+line/);
  assert.equal(decodeUrlState(text).cmp, 'base line');
  assert.equal(decodeUrlState('run=x').cmp, undefined);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { graphKind, graphKindShort, graphLabels } from '../src/widgets/graph_names.ts';

test('two graphs of one name are numbered; a unique name is left alone', () => {
  const labels = graphLabels([
    { graph_id: 'g1', graph_name: 'train_step' },
    { graph_id: 'g2', graph_name: 'train_step' },
    { graph_id: 'g1', graph_name: 'train_step' },
    { graph_id: 'g3', graph_name: 'loss' },
    { graph_id: 'g4', graph_name: '' },
  ]);
  assert.deepEqual(Object.fromEntries(labels), {
    g1: 'train_step #1',
    g2: 'train_step #2',
    g3: 'loss',
    g4: 'g4',
  });
});

test("Keras's scratch graph is not called a tf.function", () => {
  assert.equal(graphKind('train_step'), 'tf.function');
  assert.notEqual(graphKind('scratch_graph'), 'tf.function');
});

test('the short kind (root-cause card) says "Keras graph" for scratch_graph, as the report does', () => {
  assert.equal(graphKindShort('scratch_graph'), 'Keras graph');
  assert.equal(graphKindShort('train_step'), 'tf.function');
});

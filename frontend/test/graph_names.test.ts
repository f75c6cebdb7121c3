import { test } from 'node:test';
import assert from 'node:assert/strict';
import { functionKind, graphKind, graphKindShort, graphLabels, noTraceReason } from '../src/widgets/graph_names.ts';
import { graphLabel } from '../src/panels/graph_structure/graph_structure.ts';

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
  assert.equal(graphKindShort('scratch_graph_1'), 'Keras graph'); // numbered under tf.distribute
  assert.equal(graphKindShort('scratch_graph_step'), 'tf.function');
  assert.equal(graphKindShort('train_step'), 'tf.function');
});

test('a JAX run\'s graphs are jitted functions, never "tf.function"; a TF run keeps its words', () => {
  assert.equal(graphKindShort('jit_train_step', 'jax'), 'jitted function');
  assert.equal(graphKind('jit_train_step', 'jax'), 'a function compiled with jax.jit');
  // a while loop's body: its condition function is not recorded, and that is said where the body is shown
  assert.match(
    graphKind('jit_step.while_2', 'jax'),
    /^a while loop's body .*the loop's condition function runs unrecorded$/,
  );
  assert.equal(graphKind('jit_step.while_2.scan_3', 'jax'), 'a function compiled with jax.jit');
  // a shard_map body: its figures are the whole mesh's, as the report says
  assert.match(graphKind('jit_step.shard_map_1', 'jax'), /^a shard_map body .*every device's shard/);
  assert.equal(graphKind('jit_step.shard_map_1.scan_2', 'jax'), 'a function compiled with jax.jit');
  assert.equal(graphKind('jit_step.shard_map_1', 'tensorflow'), 'tf.function');
  assert.equal(graphKindShort('scratch_graph', 'tensorflow'), 'Keras graph');
  assert.equal(graphKind('train_step', 'tensorflow'), 'tf.function');
});

test("Graph Structure's label and its no-trace tooltip speak of the JAX writer on a JAX run", () => {
  const chain = [
    { graph_id: 'g1', name: 'jit_step' },
    { graph_id: 'g2', name: 'jit_step.scan_1' },
  ];
  assert.equal(graphLabel(chain, 'g2', 'jax'), 'in jit_step › jit_step.scan_1 (a function compiled with jax.jit)');
  assert.equal(graphLabel(chain, 'g2', 'tensorflow'), 'in jit_step › jit_step.scan_1 (tf.function)');
  assert.match(noTraceReason('jax'), /^The JAX writer did not record this tensor/);
  assert.doesNotMatch(noTraceReason('jax'), /TensorFlow/);
  assert.match(noTraceReason('tensorflow'), /^TensorFlow did not trace this tensor/);
});

test('a call on the timeline is of a jitted function in a JAX run, of a tf.function in a TF run', () => {
  assert.equal(functionKind('jax'), 'jitted function');
  assert.equal(functionKind('tensorflow'), 'tf.function');
  assert.equal(graphKindShort('scratch_graph', 'jax'), 'jitted function');
});

/**
 * Graph names as a list shows them: two graphs with one name (a function traced twice, e.g. for two input shapes)
 * are told apart by a number in order of appearance; Keras's own scratch graph is not called a tf.function.
 */
import type { Framework } from '../api/wire.ts';

/** Graphs Keras builds for itself (shape inference), not a tf.function the user wrote; numbered under
 * tf.distribute (`scratch_graph_1`). */
const KERAS_GRAPH = /^scratch_graph(_\d+)?$/;

/** A while loop's body as the JAX writer names it (`jit_step.while_2`; jax/bodies.py). */
const JAX_WHILE_BODY = /\.while_\d+$/;

/** A shard_map's (or pmap's) body as the JAX writer names it (`jit_step.shard_map_1`; jax/shard_bodies.py). */
const JAX_SHARD_MAP_BODY = /\.shard_map_\d+$/;

/** What the graph is: "tf.function", or what Keras uses it for; in a run the JAX writer wrote (`framework`, the
 * run's RunInfo.framework), a function compiled with jax.jit. */
export function graphKind(name: string, framework: Framework = 'tensorflow'): string {
  if (framework === 'jax' && JAX_WHILE_BODY.test(name))
    return "a while loop's body in a function compiled with jax.jit, traced at its first iterations of each call; the loop's condition function runs unrecorded";
  if (framework === 'jax' && JAX_SHARD_MAP_BODY.test(name))
    return "a shard_map body in a function compiled with jax.jit; its figures cover every device's shard (the counts summed over the mesh)";
  if (framework === 'jax') return 'a function compiled with jax.jit';
  return KERAS_GRAPH.test(name) ? 'a graph Keras builds for shape inference' : 'tf.function';
}

/** graphKind in two words, for a one-line title (the root-cause card): "tf.function", "Keras graph" or, in a JAX
 * run, "jitted function" (as `analysis/report_text.py` says it). */
export function graphKindShort(name: string, framework: Framework = 'tensorflow'): string {
  return framework !== 'jax' && KERAS_GRAPH.test(name) ? 'Keras graph' : functionKind(framework);
}

/** What a compiled function is called in the run's framework: "tf.function" or "jitted function" (a call of one is
 * an execution on the timeline). */
export function functionKind(framework: Framework = 'tensorflow'): string {
  return framework === 'jax' ? 'jitted function' : 'tf.function';
}

/** Why an op's output has no trace, as a tooltip: what TensorFlow's dump callback, or the JAX writer, leaves out. */
export function noTraceReason(framework: Framework = 'tensorflow'): string {
  return framework === 'jax'
    ? "The JAX writer did not record this tensor (e.g. a jitted function's argument or constant, a non-floating " +
        'output, or a while-loop iteration past the 100th)'
    : 'TensorFlow did not trace this tensor (e.g. a function-input placeholder or a gradient op)';
}

/** graph id -> its label among `graphs` (in order of appearance): the name, numbered where names repeat. */
export function graphLabels(graphs: Array<{ graph_id: string; graph_name: string }>): Map<string, string> {
  const idsOf = new Map<string, string[]>();
  for (const g of graphs) {
    const name = g.graph_name || g.graph_id;
    const ids = idsOf.get(name) ?? [];
    if (!ids.includes(g.graph_id)) ids.push(g.graph_id);
    idsOf.set(name, ids);
  }
  const out = new Map<string, string>();
  for (const [name, ids] of idsOf) ids.forEach((id, i) => out.set(id, ids.length > 1 ? `${name} #${i + 1}` : name));
  return out;
}

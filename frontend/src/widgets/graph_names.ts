/**
 * Graph names as a list shows them: two graphs with one name (a function traced twice, e.g. for two input shapes)
 * are told apart by a number in order of appearance; Keras's own scratch graph is not called a tf.function.
 */

/** Graphs Keras builds for itself (shape inference), not a tf.function the user wrote. */
const KERAS_GRAPHS = new Set(['scratch_graph']);

/** What the graph is: "tf.function", or what Keras uses it for. */
export function graphKind(name: string): string {
  return KERAS_GRAPHS.has(name) ? 'a graph Keras builds for shape inference' : 'tf.function';
}

/** graphKind in two words, for a one-line title (the root-cause card): "tf.function" or "Keras graph" (as
 * `analysis/report_text.py` says it). */
export function graphKindShort(name: string): string {
  return KERAS_GRAPHS.has(name) ? 'Keras graph' : 'tf.function';
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

// Wire types (see ../wire.ts): Graph Structure: graphs, ops and the drawn neighbourhood.
import type { AlertRole } from './alerts.ts';
import type { TensorHealth } from './health.ts';

// ---------------------------------------------------------------------------------------------------------------
// graph / op — produced by `api/routes.py:graph` / `op`
// ---------------------------------------------------------------------------------------------------------------

export interface GraphRef {
  graph_id: string;
  name: string;
}

export interface GraphInfo {
  run: string;
  graph_id: string;
  name: string;
  outer_graph_id: string | null;
  /** Outermost first, ending with this graph. */
  chain: GraphRef[];
  inner_graphs: GraphRef[];
  op_count: number;
}

/** Trace indices of one op output (or of the whole op), capped. */
export interface TraceIndices {
  /** Number of traces. */
  count: number;
  /** Up to 1,000 indices into graph_executions: the nearest to `near` when given, else the first. */
  indices: number[];
}

export interface OpSummary {
  graph_id: string;
  op_name: string;
  op_type: string;
  num_outputs: number;
}

export interface OpInput {
  /** Input slot of the focused op. */
  slot: number;
  op_name: string;
  /** Output slot of the producing op. */
  output_slot: number;
  /** Null when the producing op is not in the graph (should not happen, but dumps can be partial). */
  op: OpSummary | null;
  /** Traces of that producing op's output slot. count 0 means "not traced" (e.g. a function-input Placeholder). */
  traces: TraceIndices;
}

export interface OpConsumer {
  /** Input slot of the consumer. */
  input_slot: number;
  op_name: string;
  op: OpSummary | null;
  traces: TraceIndices;
}

export interface OpInfo {
  run: string;
  graph_id: string;
  graph_chain: GraphRef[];
  op_name: string;
  op_type: string;
  device_name: string | null;
  num_outputs: number;
  output_tensor_ids: number[];
  stack_frame_ids: string[];
  host: string | null;
  /** Traces of this op (all output slots). */
  traces: TraceIndices;
  inputs: OpInput[];
  /** One entry per output slot, each listing its consumers. */
  consumers: Array<{ output_slot: number; consumers: OpConsumer[] }>;
}

// ---------------------------------------------------------------------------------------------------------------
// graph_neighborhood — produced by `api/routes.py:graph_neighborhood` (analysis in `analysis/neighborhood.py`)
// ---------------------------------------------------------------------------------------------------------------

/** One node of the graph around an op (analysis/neighborhood.py neighborhood). */
export interface NeighborhoodNode {
  /** `graph_id:op_name` for an op, `exec:N` for the eager execution a function input came from. */
  id: string;
  kind: 'op' | 'execution';
  graph_id: string | null;
  op_name: string | null;
  op_type: string;
  /** Hops from the focused op: negative upstream, positive downstream. */
  depth: number;
  /** The op's trace of the focused step (graph_executions index); null when the op has none. */
  trace_index: number | null;
  execution_index?: number;
  output_slot?: number;
  health: TensorHealth | null;
  role: AlertRole | null;
  device: string | null;
  /** On a path from the root cause's producer to the focused op. */
  on_path: boolean;
  /** Edges not followed (the hop limit or the node cap). */
  more_up: number;
  more_down: number;
  /** For a function input: where its value came from, or why that cannot be known. */
  link?: string;
}

export interface NeighborhoodEdge {
  source: string;
  source_slot: number;
  target: string;
  target_slot: number;
  /** The edge crosses a function boundary (a caller's tensor into a function input, a call into its graph). */
  cross_graph: boolean;
}

export interface NeighborhoodResponse {
  run: string;
  graph_id: string;
  op_name: string;
  hops: number;
  direction: 'up' | 'down' | 'both';
  near: number | null;
  nodes: NeighborhoodNode[];
  edges: NeighborhoodEdge[];
  /** The node cap was reached: some edges end in a `more` count. */
  truncated: boolean;
  /** What the picture cannot show (no control edges in a dump). */
  notes: string[];
}

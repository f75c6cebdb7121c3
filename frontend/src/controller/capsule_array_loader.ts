/**
 * A NaN capsule's batch array or variable in the Tensor Values view (#26). The view's loader (tensor_loader.ts)
 * asks here instead of the `tensor` route when its target names a capsule array: the `capsule_array` route answers
 * the same numbers and slices, which this module hands over as the `TensorResponse` the view already draws (its
 * `tensor` reference names the array; no run, no op, no inputs).
 */
import type { Api } from '../api/client.ts';
import type { CapsuleArrayTarget } from '../api/requests.ts';
import type { CapsuleArrayResponse, TensorResponse } from '../api/wire.ts';

/** The `capsule_array` answer as the `tensor` route's shape (every capsule array holds its values). */
export function asTensorResponse(a: CapsuleArrayResponse): TensorResponse {
  return {
    run: '',
    tensor: {
      source: 'graph',
      index: -1,
      output: 0,
      op_name: a.name,
      op_type: a.group,
      graph_id: null,
      wall_time: 0,
      tensor_debug_mode: 'FULL_TENSOR',
    },
    dtype: a.dtype,
    shape: a.shape,
    size: a.size,
    has_values: true,
    note: null,
    health: null,
    stats: a.stats,
    histogram: a.histogram,
    nonfinite: a.nonfinite,
    slice: a.slice,
  };
}

/** Where the view opens a batch array asked for one sample (`c.sample`): that sample's first non-finite element,
 * else its first element — the plane holding it, the grid centred on it. Null when no sample is asked (or it is
 * outside the array). */
export function samplePosition(c: CapsuleArrayTarget | undefined, r: TensorResponse): number[] | null {
  const shape = r.shape;
  if (c?.sample === undefined || !shape || !shape.length || c.sample < 0 || c.sample >= (shape[0] ?? 0)) return null;
  const bad = r.nonfinite?.positions.find((p) => p[0] === c.sample);
  return bad ?? shape.map((_, k) => (k === 0 ? (c.sample as number) : 0));
}

/** One request of the view for a capsule array: its summary, or a slice of its values. */
export async function fetchCapsuleArray(
  api: Api,
  c: CapsuleArrayTarget,
  slice?: string,
  bins?: number,
): Promise<TensorResponse> {
  return asTensorResponse(await api.capsuleArray(c, slice, bins));
}

/** Pure choices the focus chain makes: which frame, which trace, which rows to tint. */
import type { OpInfo, RootCauseProducer, StackFrame } from '../api/wire.ts';

/** Innermost user frame (frames are outermost first), else the innermost frame, else null. */
export function innermostUserFrame(frames: StackFrame[]): StackFrame | null {
  for (let i = frames.length - 1; i >= 0; i--) if (frames[i]!.is_user) return frames[i]!;
  return frames.length ? frames[frames.length - 1]! : null;
}

/** The trace index in `indices` closest to `near` (ties: the earlier one), or null when there is none. */
export function nearestIndex(indices: number[], near: number | null): number | null {
  if (!indices.length) return null;
  if (near === null) return indices[0]!;
  let best = indices[0]!;
  for (const i of indices) if (Math.abs(i - near) < Math.abs(best - near)) best = i;
  return best;
}

/** Trace indices of the focused op's inputs nearest the focus, so their rows can be tinted. */
export function inputRowsOf(op: OpInfo, near: number): number[] {
  const out: number[] = [];
  for (const input of op.inputs) {
    const before = input.traces.indices.filter((i) => i <= near);
    const idx = nearestIndex(before.length ? before : input.traces.indices, near);
    if (idx !== null) out.push(idx);
  }
  return out;
}

/**
 * The line a person would fix for a root cause: the forward op's for a NaN born in the backward pass, the dataset's
 * for a NaN the data carried, else the producer's own creation line.
 */
export function fixFrame(p: RootCauseProducer): StackFrame | null {
  return p.forward?.user_frame ?? p.data?.user_frame ?? p.user_frame;
}

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

/** The trace in `indices` nearest `near` among those at or before it (an input's value when the op ran), else the
 * nearest at all. */
export function nearestBefore(indices: number[], near: number | null): number | null {
  if (near === null) return nearestIndex(indices, null);
  const before = indices.filter((i) => i <= near);
  return nearestIndex(before.length ? before : indices, near);
}

/** Trace indices of the focused op's inputs nearest the focus, so their rows can be tinted. */
export function inputRowsOf(op: OpInfo, near: number): number[] {
  const out: number[] = [];
  for (const input of op.inputs) {
    const idx = nearestBefore(input.traces.indices, near);
    if (idx !== null) out.push(idx);
  }
  return out;
}

/** The execution a timeline key moves the focus to (arrows: one; PageUp/PageDown: one window of `size`; Home/End:
 * the first / last), or null for a key the timeline does not take. With no execution focused, it starts at the
 * window's first box. */
export function timelineKeyTarget(
  key: string,
  focused: number | null,
  begin: number,
  size: number,
  total: number,
): number | null {
  if (total <= 0) return null;
  const at = focused ?? begin;
  const step: Record<string, number> = {
    ArrowLeft: -1,
    ArrowRight: 1,
    PageUp: -Math.max(1, size),
    PageDown: Math.max(1, size),
  };
  let next: number;
  if (key === 'Home') next = 0;
  else if (key === 'End') next = total - 1;
  else if (key in step) next = focused === null && (key === 'ArrowRight' || key === 'PageDown') ? at : at + step[key]!;
  else return null;
  return Math.min(Math.max(next, 0), total - 1);
}

/** Why the go-to-# input's text is not a trace of the run (null when it is one): said beside the input. */
export function jumpError(text: string, total: number): string | null {
  const t = text.trim();
  if (total <= 0) return 'This run has no trace to go to.';
  if (!/^-?[0-9]+$/.test(t)) return `Type a whole number, 0–${(total - 1).toLocaleString('en-US')}.`;
  const n = Number(t);
  if (n < 0 || n >= total) return `No trace #${t}: traces are numbered 0–${(total - 1).toLocaleString('en-US')}.`;
  return null;
}

/**
 * The line a person would fix for a root cause: the forward op's for a NaN born in the backward pass, the dataset's
 * for a NaN the data carried (not one born inside the pipeline: its map function's line is the fix), else the
 * producer's own creation line.
 */
export function fixFrame(p: RootCauseProducer): StackFrame | null {
  return p.forward?.user_frame ?? (p.data?.born_in_pipeline ? null : p.data?.user_frame) ?? p.user_frame;
}

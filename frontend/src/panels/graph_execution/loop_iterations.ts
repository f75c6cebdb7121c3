/**
 * A JAX while loop's trace mask (op type LoopIterations, written by the JAX writer's jax/iterations.py beside each
 * while op): one element per iteration that ran, 1 where it was traced. Its row says it in words — "ran 150
 * iterations; iterations 101–150 not traced" — instead of health chips of an integer mask. The same words as the
 * report's (analysis/loop_iterations.py words).
 */
import type { GraphExecutionRow, TensorHealth } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';

export const LOOP_ITERATIONS = 'LoopIterations';

function count(h: TensorHealth, key: 'size' | 'pos'): number | null {
  const v = (h as unknown as Record<string, unknown>)[key];
  return typeof v === 'number' ? v : null;
}

/** The words for a trace mask's health; null when its mode records no size (CURT_HEALTH, NO_TENSOR). */
export function loopIterationsText(h: TensorHealth): string | null {
  const ran = count(h, 'size');
  if (ran === null) return null;
  const traced = count(h, 'pos');
  const n = (x: number): string => x.toLocaleString('en-US');
  const head = `ran ${n(ran)} iteration${ran === 1 ? '' : 's'}`;
  if (traced === null) return `${head}; this mode does not record how many were traced`;
  if (traced >= ran) return `${head}, all traced`;
  return `${head}; iterations ${n(traced + 1)}–${n(ran)} not traced`;
}

/** The health cell of a trace mask's row, in words; null for any other row (or a mode that records no size). */
export function loopCell(item: GraphExecutionRow): HTMLElement | null {
  const text = item.op_type === LOOP_ITERATIONS ? loopIterationsText(item.health) : null;
  if (text === null) return null;
  const cell = el('span', 'ge-loop', text);
  cell.dataset.testid = 'ge-loop';
  cell.title = `${text} (the JAX writer traces a while body at its first iterations of each call only)`;
  return cell;
}

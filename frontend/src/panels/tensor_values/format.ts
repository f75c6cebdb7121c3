/** How tensor values read in the Tensor Values view: short numbers, ∞ signs, and a class per special value. */
import type { Num } from '../../api/wire.ts';

export type Value = Num | boolean | string | undefined;

/** A value as text (6 significant digits for non-integers). */
export function formatValue(v: Value): string {
  if (v === undefined) return '…';
  if (v === 'NaN') return 'NaN';
  if (v === 'Infinity') return '+∞';
  if (v === '-Infinity') return '−∞';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'string') return v;
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-4 || a >= 1e6) ? v.toExponential(4) : String(Number(v.toPrecision(6)));
}

/** The class colouring a special value (NaN, ±∞, zero), or ''. */
export function valueClass(v: Value): string {
  if (v === 'NaN') return 'v-nan';
  if (v === 'Infinity') return 'v-posinf';
  if (v === '-Infinity') return 'v-neginf';
  if (v === 0 || v === false) return 'v-zero';
  return '';
}

/** A stat for display: numbers formatted, null as "—". */
export function formatStat(v: Num | number | null | undefined): string {
  return v === null || v === undefined ? '—' : formatValue(v);
}

export const shapeText = (shape: number[] | null): string => (shape ? `[${shape.join(', ')}]` : '[?]');

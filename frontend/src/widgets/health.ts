/**
 * Health chips: one compact rendering of a tensor's decoded debug value for every debug mode, and for empty
 * placeholders. The input comes off the wire, so it is validated field by field: anything unexpected renders as an
 * "unknown" chip and never throws. Distinct colours for -∞ (blue), +∞ (orange) and NaN (red).
 */

export type ChipKind = 'neginf' | 'posinf' | 'nan' | 'ok' | 'info' | 'unknown' | 'empty' | 'bad';

export interface Chip {
  kind: ChipKind;
  text: string;
  title: string;
}

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isCount = (v: unknown): v is number => isNum(v) && v >= 0;
const fmt = (n: number) => (Math.abs(n) >= 1e6 ? n.toExponential(2) : n.toLocaleString('en-US'));

/** Encoded non-finite floats come as strings ("NaN", "Infinity", "-Infinity"). */
export function numText(v: unknown): string {
  if (v === 'NaN') return 'NaN';
  if (v === 'Infinity') return '+∞';
  if (v === '-Infinity') return '-∞';
  if (isNum(v)) return Number.isInteger(v) ? String(v) : v.toPrecision(4);
  return '?';
}

function counts(h: Record<string, unknown>, out: Chip[]): boolean {
  const { neg_inf, pos_inf, nan } = h;
  if (
    !(isCount(neg_inf) || neg_inf === null) ||
    !(isCount(pos_inf) || pos_inf === null) ||
    !(isCount(nan) || nan === null)
  ) {
    return false;
  }
  if (isCount(neg_inf) && neg_inf > 0)
    out.push({ kind: 'neginf', text: `-∞ ${fmt(neg_inf)}`, title: `${neg_inf} elements are -Infinity` });
  if (isCount(pos_inf) && pos_inf > 0)
    out.push({ kind: 'posinf', text: `+∞ ${fmt(pos_inf)}`, title: `${pos_inf} elements are +Infinity` });
  if (isCount(nan) && nan > 0) out.push({ kind: 'nan', text: `NaN ${fmt(nan)}`, title: `${nan} elements are NaN` });
  return true;
}

const unknown = (why: string): Chip[] => [{ kind: 'unknown', text: 'unknown', title: why }];

/** The chips for one TensorHealth value (typed `unknown` on purpose: it is untrusted wire data). */
export function healthChips(h: unknown): Chip[] {
  try {
    return chipsOf(h);
  } catch {
    return unknown('malformed health value');
  }
}

function chipsOf(h: unknown): Chip[] {
  if (typeof h !== 'object' || h === null || Array.isArray(h)) return unknown('no health value');
  const r = h as Record<string, unknown>;
  const out: Chip[] = [];
  switch (r.mode) {
    case 'NO_TENSOR':
      return [{ kind: 'info', text: 'computed', title: 'NO_TENSOR mode: only records that the tensor was computed' }];
    case 'EMPTY':
      return [
        { kind: 'empty', text: 'not instrumented', title: 'A non-float output: the health modes do not record it' },
      ];
    case 'UNKNOWN':
      return unknown(typeof r.reason === 'string' ? r.reason : 'the decoder did not understand this value');
    case 'CURT_HEALTH':
      if (typeof r.any_inf_or_nan !== 'boolean') return unknown('CURT_HEALTH without any_inf_or_nan');
      return r.any_inf_or_nan
        ? [
            {
              kind: 'bad',
              text: 'inf/NaN',
              title: 'CURT_HEALTH: some element is ±Infinity or NaN (counts not recorded)',
            },
          ]
        : [{ kind: 'ok', text: 'finite', title: 'CURT_HEALTH: every element is finite' }];
    case 'CONCISE_HEALTH':
    case 'FULL_HEALTH':
      if (!isCount(r.size) || !counts(r, out)) return unknown(`${r.mode} with malformed counts`);
      if (!out.length) out.push({ kind: 'ok', text: 'finite', title: `all ${r.size} elements are finite` });
      return out;
    case 'SHAPE':
      if (!isCount(r.size)) return unknown('SHAPE without size');
      return [{ kind: 'info', text: `size ${fmt(r.size)}`, title: 'SHAPE mode records shape only, not values' }];
    case 'FULL_TENSOR': {
      if (!counts(r, out)) return unknown('FULL_TENSOR summary with malformed counts');
      if (r.neg_inf === null && r.nan === null) return [{ kind: 'info', text: 'value', title: 'non-numeric tensor' }];
      if (!out.length) {
        const range = r.min !== null && r.min !== undefined ? ` [${numText(r.min)}, ${numText(r.max)}]` : '';
        out.push({ kind: 'ok', text: 'finite' + range, title: `mean ${numText(r.mean)}` });
      }
      return out;
    }
    default:
      return unknown(`unexpected mode ${JSON.stringify(r.mode)?.slice(0, 40) ?? '?'}`);
  }
}

/** True when the value records some non-finite element. */
export function isNonFinite(h: unknown): boolean {
  return healthChips(h).some((c) => c.kind === 'neginf' || c.kind === 'posinf' || c.kind === 'nan' || c.kind === 'bad');
}

/** dtype and shape text for the list columns ('' when the mode does not record them). */
export function dtypeShape(h: unknown): { dtype: string; shape: string } {
  try {
    return dtypeShapeOf(h);
  } catch {
    return { dtype: '', shape: '' };
  }
}

function dtypeShapeOf(h: unknown): { dtype: string; shape: string } {
  if (typeof h !== 'object' || h === null) return { dtype: '', shape: '' };
  const r = h as Record<string, unknown>;
  const dtype = typeof r.dtype === 'string' ? r.dtype : '';
  if (Array.isArray(r.shape) && r.shape.every(isCount)) {
    return { dtype, shape: `${r.shape_truncated === true ? '…,' : ''}[${r.shape.join(',')}]` };
  }
  if (isCount(r.rank)) return { dtype, shape: `rank ${r.rank}` };
  return { dtype, shape: '' };
}

/** A <span class="chips"> holding the chips (text only; titles explain them). */
export function renderHealth(h: unknown): HTMLSpanElement {
  const wrap = document.createElement('span');
  wrap.className = 'chips';
  for (const c of healthChips(h)) {
    const s = document.createElement('span');
    s.className = `chip chip-${c.kind}`;
    s.textContent = c.text;
    s.title = c.title;
    wrap.appendChild(s);
  }
  return wrap;
}

/**
 * Health chips: one compact rendering of a tensor's decoded debug value for every debug mode, and for empty
 * placeholders. The input comes off the wire, so it is validated field by field: anything unexpected renders as an
 * "unknown" chip and never throws. Distinct colours for -∞ (blue), +∞ (orange) and NaN (red); the counts of
 * negative, zero and positive elements where the mode records them (`−×3 0×300 +×700`, as the reference shows), and
 * in a warning style when they flow into an op they break (zeros into log or a division, negatives into sqrt or
 * log): the clue to a log(0) is the zeros of the tensor before it.
 */
import { chipTextWidth, fitChips } from './chip_fit.ts';

export type ChipKind = 'neginf' | 'posinf' | 'nan' | 'ok' | 'info' | 'unknown' | 'empty' | 'bad' | 'count' | 'warn';

/** Where the tensor goes: the op type consuming it and the input slot (to mark counts that break that op). */
export interface HealthUse {
  opType: string | null;
  slot: number;
}

// Ops that a zero breaks (at the given input slot; 'any' for every slot) and ops that a negative breaks.
const ZERO_BREAKS: Record<string, number | 'any'> = {
  Log: 0,
  Xlogy: 1,
  Xlog1py: 'any',
  Xdivy: 1,
  RealDiv: 1,
  Div: 1,
  FloorDiv: 1,
  TruncateDiv: 1,
  Reciprocal: 0,
  Inv: 0,
  Rsqrt: 0,
  SqrtGrad: 0, // dy * 0.5 / y: a zero y (the forward Sqrt's output) divides by zero
  Pow: 'any',
};
const NEG_BREAKS: Record<string, number | 'any'> = { Sqrt: 0, Rsqrt: 0, Log: 0, Xlogy: 1, Pow: 0 };

function breaks(table: Record<string, number | 'any'>, use: HealthUse | undefined): boolean {
  if (!use?.opType) return false;
  const slot = Object.hasOwn(table, use.opType) ? table[use.opType] : undefined;
  return slot === 'any' || slot === use.slot;
}

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

/** Chips for the negative / zero / positive counts (FULL_HEALTH, FULL_TENSOR); zero counts are left out. */
function signCounts(h: Record<string, unknown>, out: Chip[], use: HealthUse | undefined): void {
  const parts: Array<[unknown, string, string, boolean]> = [
    [h.neg, '−', 'negative', breaks(NEG_BREAKS, use)],
    [h.zero, '0', 'zero', breaks(ZERO_BREAKS, use)],
    [h.pos, '+', 'positive', false],
  ];
  for (const [n, sign, word, bad] of parts) {
    if (!isCount(n) || n === 0) continue;
    const title =
      word === 'zero' ? `${fmt(n)} zero${n === 1 ? '' : 's'}` : `${fmt(n)} ${word} element${n === 1 ? '' : 's'}`;
    out.push(
      bad
        ? {
            kind: 'warn',
            text: `${sign}×${fmt(n)}`,
            title: `${title} flowing into ${use?.opType ?? '?'}: it turns them into NaN or ∞`,
          }
        : { kind: 'count', text: `${sign}×${fmt(n)}`, title },
    );
  }
}

const unknown = (why: string): Chip[] => [{ kind: 'unknown', text: 'unknown', title: why }];

/** The chips for one TensorHealth value (typed `unknown` on purpose: it is untrusted wire data); `use`: the op
 * consuming the tensor, to mark counts that break it. */
export function healthChips(h: unknown, use?: HealthUse): Chip[] {
  try {
    return chipsOf(h, use);
  } catch {
    return unknown('malformed health value');
  }
}

function chipsOf(h: unknown, use: HealthUse | undefined): Chip[] {
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
      if (!isCount(r.size) || !counts(r, out)) return unknown(`${r.mode} with malformed counts`);
      if (!out.length)
        out.push({
          kind: 'ok',
          text: `finite ×${fmt(r.size)}`,
          title: `all ${fmt(r.size)} elements are finite (CONCISE_HEALTH records no zeros or signs)`,
        });
      return out;
    case 'FULL_HEALTH':
      if (!isCount(r.size) || !counts(r, out)) return unknown(`${r.mode} with malformed counts`);
      signCounts(r, out, use);
      if (!out.length) out.push({ kind: 'ok', text: 'empty', title: 'a tensor of 0 elements' });
      return out;
    case 'SHAPE':
      if (!isCount(r.size)) return unknown('SHAPE without size');
      return [{ kind: 'info', text: `size ${fmt(r.size)}`, title: 'SHAPE mode records shape only, not values' }];
    case 'FULL_TENSOR': {
      if (!counts(r, out)) return unknown('FULL_TENSOR summary with malformed counts');
      if (r.neg_inf === null && r.nan === null) return [{ kind: 'info', text: 'value', title: 'non-numeric tensor' }];
      signCounts(r, out, use);
      if (r.min !== null && r.min !== undefined)
        out.push({ kind: 'info', text: `[${numText(r.min)}, ${numText(r.max)}]`, title: `mean ${numText(r.mean)}` });
      if (!out.length) out.push({ kind: 'ok', text: 'empty', title: 'a tensor of 0 elements' });
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

const MODE_COUNTS: Record<string, string[]> = {
  FULL_HEALTH: ['neg_inf', 'pos_inf', 'nan', 'neg', 'zero', 'pos'],
  FULL_TENSOR: ['neg_inf', 'pos_inf', 'nan', 'neg', 'zero', 'pos'],
  CONCISE_HEALTH: ['neg_inf', 'pos_inf', 'nan'],
};
const COUNT_LABEL: Record<string, string> = {
  neg_inf: '-∞',
  pos_inf: '+∞',
  nan: 'NaN',
  neg: 'negative',
  zero: 'zero',
  pos: 'positive',
};

/** The detail pane's rows for one TensorHealth: the mode, dtype, shape, size and every count the mode records
 * (and what it does not). */
export function healthDetail(h: unknown): Array<[string, string]> {
  try {
    return detailOf(h);
  } catch {
    return [['mode', 'unknown']];
  }
}

function detailOf(h: unknown): Array<[string, string]> {
  if (typeof h !== 'object' || h === null || Array.isArray(h) || typeof (h as { mode?: unknown }).mode !== 'string')
    return [['mode', 'unknown']];
  const r = h as Record<string, unknown>;
  const mode = r.mode as string;
  const rows: Array<[string, string]> = [['mode', mode]];
  const { dtype, shape } = dtypeShapeOf(h);
  if (dtype) rows.push(['dtype', dtype]);
  if (shape) rows.push(['shape', shape]);
  if (isCount(r.size)) rows.push(['size', `${fmt(r.size)} element${r.size === 1 ? '' : 's'}`]);
  if (mode === 'CURT_HEALTH') {
    rows.push(['NaN or ∞', r.any_inf_or_nan === true ? 'some' : r.any_inf_or_nan === false ? 'none' : '?']);
    rows.push(['counts', 'not recorded by CURT_HEALTH']);
  }
  for (const k of MODE_COUNTS[mode] ?? []) rows.push([COUNT_LABEL[k]!, isCount(r[k]) ? fmt(r[k]) : '—']);
  if (mode === 'CONCISE_HEALTH') rows.push(['zero / negative / positive', 'not recorded by CONCISE_HEALTH']);
  if (mode === 'FULL_TENSOR' && r.min !== null && r.min !== undefined) {
    rows.push(['min', numText(r.min)], ['max', numText(r.max)], ['mean', numText(r.mean)]);
  }
  if (mode === 'UNKNOWN' && typeof r.reason === 'string') rows.push(['why', r.reason]);
  return rows;
}

/** A <span class="chips"> holding the chips (text only; titles explain them); `width`: the px the chips may take
 * (chip_fit.ts: non-finite chips always, the rest as fit, a "+N" chip for those left out). */
export function renderHealth(h: unknown, use?: HealthUse, width: number | null = null): HTMLSpanElement {
  const wrap = document.createElement('span');
  wrap.className = 'chips';
  const all = healthChips(h, use);
  const { shown, more } = fitChips(all, width, chipTextWidth);
  if (more) wrap.title = all.map((c) => `${c.text}: ${c.title}`).join('\n');
  for (const c of more ? [...shown, more] : shown) {
    const s = document.createElement('span');
    s.className = `chip chip-${c.kind}`; // the overflow chip's kind is 'more': class chip-more
    s.textContent = c.text;
    s.title = c.title;
    wrap.appendChild(s);
  }
  return wrap;
}

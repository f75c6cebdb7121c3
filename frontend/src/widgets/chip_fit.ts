/**
 * Which health chips a cell of a given width shows: every non-finite chip (the reason the row matters), then the
 * others in their order while they fit, and one "N more" chip holding the rest (its tooltip lists them; worded, not
 * "+N", which would read as one more count beside "+×1,204"; "…" where even the words do not fit). A cell never
 * clips a chip mid-text. Widths come from a text measure (canvas `measureText` in the page: no layout read), so a
 * list can fit its rows while it draws.
 */

/** Chips that say a value is not finite (or cannot be read): always shown. */
const MUST_SHOW = new Set(['neginf', 'posinf', 'nan', 'bad', 'unknown']);

/** A chip as health.ts makes it (its kind names its style). */
export interface FitChip {
  kind: string;
  text: string;
  title: string;
}
const CHIP_PAD = 14; // 6 px padding each side + a 1 px border each side
const GAP = 3;

export interface ChipFit<C extends FitChip> {
  shown: C[];
  /** The "N more" chip for the chips left out (null when every chip fits). */
  more: FitChip | null;
}

export type TextMeasure = (text: string) => number;

const chipWidth = (c: FitChip, measure: TextMeasure) => measure(c.text) + CHIP_PAD;
/** The overflow chip's text, and its short form where that does not fit. */
export const moreText = (n: number) => `${n} more`;
const MORE_SHORT = '…';

/** The chips shown in `width` px (all of them when width is not known yet). */
export function fitChips<C extends FitChip>(chips: C[], width: number | null, measure: TextMeasure): ChipFit<C> {
  if (width === null || !(width > 0)) return { shown: chips, more: null };
  const total = chips.reduce((w, c, i) => w + chipWidth(c, measure) + (i ? GAP : 0), 0);
  if (total <= width) return { shown: chips, more: null };
  const keep = new Set(chips.filter((c) => MUST_SHOW.has(c.kind)));
  const moreWidth = (n: number) => chipWidth({ kind: 'more', text: moreText(n), title: '' }, measure) + GAP;
  let used = [...keep].reduce((w, c) => w + chipWidth(c, measure) + GAP, 0);
  let left = chips.length - keep.size;
  for (const c of chips) {
    if (keep.has(c)) continue;
    const w = chipWidth(c, measure) + GAP;
    const reserve = left > 1 ? moreWidth(left - 1) : 0; // room for "N more" while more chips remain after this one
    if (used + w + reserve > width + GAP) break;
    keep.add(c);
    used += w;
    left -= 1;
  }
  const shown = chips.filter((c) => keep.has(c));
  const hidden = chips.filter((c) => !keep.has(c));
  if (!hidden.length) return { shown, more: null };
  const title = hidden.map((c) => `${c.text}: ${c.title}`).join('\n');
  // Worded where it fits; else "…" (its tooltip still lists the rest) rather than a chip cut by the cell's edge.
  const worded = moreText(hidden.length);
  const fits = used + chipWidth({ kind: 'more', text: worded, title }, measure) <= width;
  return { shown, more: { kind: 'more', text: fits ? worded : MORE_SHORT, title } };
}

let canvasContext: CanvasRenderingContext2D | null | undefined;

/** The width of a chip's text as the page draws it (11 px in the body's font family); a character estimate where
 * no canvas exists. */
export function chipTextWidth(text: string): number {
  if (canvasContext === undefined) {
    canvasContext = typeof document === 'undefined' ? null : document.createElement('canvas').getContext('2d');
    if (canvasContext) canvasContext.font = `11px ${getComputedStyle(document.body).fontFamily}`;
  }
  return canvasContext ? Math.ceil(canvasContext.measureText(text).width) : text.length * 6.5;
}

/**
 * The drawn graph's labels cut to the room they have, so a long op name, a long op type, a device badge and a
 * scope's header never run into each other or out of their box: names keep their end (the op's own name; the scope
 * prefix is what a box around them already says), op types and scope labels keep their start. Widths come from a
 * text measure (canvas `measureText` in the page: no layout read), so the node is drawn once.
 */

export type Measure = (text: string, font: string) => number;

export const NAME_FONT = '600 11px';
export const SUB_FONT = '10px';
export const DEVICE_FONT = '10px Menlo, Consolas, monospace';
export const SCOPE_FONT = '600 10px';

/** `text` shortened with "…" until `measure` says it fits in `maxPx`: at the start (keep: 'end') or at the end. */
export function fitLabel(text: string, maxPx: number, font: string, measure: Measure, keep: 'start' | 'end'): string {
  if (measure(text, font) <= maxPx) return text;
  let lo = 0;
  let hi = text.length; // the most characters kept that fit, found by bisection
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (measure(cut(text, mid, keep), font) <= maxPx) lo = mid;
    else hi = mid - 1;
  }
  return cut(text, lo, keep);
}

const cut = (text: string, n: number, keep: 'start' | 'end') =>
  keep === 'end' ? '…' + text.slice(text.length - n) : text.slice(0, n) + '…';

/** An op's name as drawn inside the box of `scope` (its path): without that prefix, which the box's header says. */
export function withinScope(name: string, scope: string | null): string {
  return scope && name.startsWith(scope + '/') && name.length > scope.length + 1 ? name.slice(scope.length + 1) : name;
}

let context: CanvasRenderingContext2D | null | undefined;
const widths = new Map<string, number>();

/** The page's measure: canvas text metrics in the body's font (a character estimate where no canvas exists). */
export function measureText(text: string, font: string): number {
  const key = font + '|' + text;
  const known = widths.get(key);
  if (known !== undefined) return known;
  if (context === undefined)
    context = typeof document === 'undefined' ? null : document.createElement('canvas').getContext('2d');
  let w: number;
  if (context) {
    context.font = font.endsWith('px') ? `${font} ${getComputedStyle(document.body).fontFamily}` : font;
    w = context.measureText(text).width;
  } else w = text.length * parseFloat(/(\d+)px/.exec(font)?.[1] ?? '10') * 0.6;
  if (widths.size > 5000) widths.clear();
  widths.set(key, w);
  return w;
}

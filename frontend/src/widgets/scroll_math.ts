/**
 * Scroll arithmetic of the virtual list, apart from the DOM so it can be tested at 10 M rows.
 *
 * Browsers cap an element's height (Chrome ≈ 33.5 M px, Firefox ≈ 17.9 M px), so 10 M rows × 24 px cannot be laid
 * out 1:1. The spacer is capped at MAX_SPACER_PX and the scroll position is mapped linearly onto the row range:
 * scrollTop 0 shows row 0 at the top, the largest scrollTop shows the last rows at the bottom. Below the cap the
 * mapping is exactly scrollTop / rowHeight, so small lists scroll natively.
 */
export const MAX_SPACER_PX = 8_000_000;

export interface Geometry {
  total: number;
  rowHeight: number;
  viewport: number;
  maxSpacer?: number;
}

/** Height of the scrolling spacer element. */
export function spacerHeight(g: Geometry): number {
  return Math.min(g.total * g.rowHeight, g.maxSpacer ?? MAX_SPACER_PX);
}

/** Largest first row (fractional, in rows) that still fills the viewport. */
export function maxFirstRow(g: Geometry): number {
  return Math.max(0, g.total - g.viewport / g.rowHeight);
}

function maxScrollTop(g: Geometry): number {
  return Math.max(0, spacerHeight(g) - g.viewport);
}

/** The (fractional) row at the top of the viewport for a scrollTop. */
export function firstRowAt(scrollTop: number, g: Geometry): number {
  const maxTop = maxScrollTop(g);
  if (maxTop <= 0) return 0;
  const t = Math.min(Math.max(scrollTop, 0), maxTop) / maxTop;
  return t * maxFirstRow(g);
}

/** The scrollTop that puts `row` (fractional) at the top of the viewport. Inverse of firstRowAt. */
export function scrollTopFor(row: number, g: Geometry): number {
  const maxRow = maxFirstRow(g);
  if (maxRow <= 0) return 0;
  const r = Math.min(Math.max(row, 0), maxRow);
  return (r / maxRow) * maxScrollTop(g);
}

/** Rows [begin, end) to put in the DOM for a first row, plus the y offset (px, viewport-relative) of `begin`. */
export function visibleRange(
  firstRow: number,
  g: Geometry,
  overscan = 2,
): { begin: number; end: number; offset: number } {
  const begin = Math.max(0, Math.floor(firstRow) - overscan);
  const end = Math.min(g.total, Math.ceil(firstRow + g.viewport / g.rowHeight) + overscan);
  return { begin, end, offset: (begin - firstRow) * g.rowHeight };
}

/** First row that brings `index` into view with minimal movement (or centres it when `center`). */
export function firstRowToReveal(index: number, firstRow: number, g: Geometry, center = false): number {
  const rows = g.viewport / g.rowHeight;
  let r = firstRow;
  if (center) r = index - rows / 2 + 0.5;
  else if (index < firstRow) r = index;
  else if (index + 1 > firstRow + rows) r = index + 1 - rows;
  return Math.min(Math.max(r, 0), maxFirstRow(g));
}

/**
 * Drawing health-over-time cells on a canvas (the health map and the sparkline share it): NaN/∞ first (red), then
 * the zero fraction (light = few zeros, dark = all zero), a shape/dtype change marked with an amber tick. Canvas,
 * not DOM: a page is thousands of cells.
 */

/** One row of cells: what HealthMapRow carries, as plain arrays (widgets know no store). */
export interface CellRow {
  nonfinite: number[];
  zero: (number | null)[];
  changed: boolean[];
  trace: number[];
}

export const NAN_COLOUR = '#d32f2f';
export const CHANGE_COLOUR = '#f9a825';
const EMPTY_COLOUR = 'rgba(128,128,128,0.15)';

/** The fill of one cell. */
export function cellColour(row: CellRow, c: number): string | null {
  if ((row.trace[c] ?? -1) < 0) return null; // not traced in this bin
  if ((row.nonfinite[c] ?? 0) > 0) return NAN_COLOUR;
  const z = row.zero[c];
  if (z === null || z === undefined) return EMPTY_COLOUR;
  const light = Math.round(85 - 60 * z); // 85% (no zero) .. 25% (all zero)
  return `hsl(140, 45%, ${light}%)`;
}

/** Sizes the canvas to its box at the device's pixel ratio and returns a context in CSS pixels. */
export function prepareCanvas(
  canvas: HTMLCanvasElement,
  width: number,
  height: number,
): CanvasRenderingContext2D | null {
  const dpr = window.devicePixelRatio || 1;
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  canvas.width = Math.max(1, Math.round(width * dpr));
  canvas.height = Math.max(1, Math.round(height * dpr));
  const ctx = canvas.getContext('2d');
  if (!ctx) return null;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return ctx;
}

/** Draws one row of cells at (x, y), each `w` x `h`. */
export function drawCells(
  ctx: CanvasRenderingContext2D,
  row: CellRow,
  x: number,
  y: number,
  w: number,
  h: number,
): void {
  for (let c = 0; c < row.trace.length; c++) {
    const fill = cellColour(row, c);
    if (fill === null) continue;
    ctx.fillStyle = fill;
    ctx.fillRect(x + c * w, y, Math.max(1, w - (w > 3 ? 1 : 0)), h - 1);
    if (row.changed[c]) {
      ctx.fillStyle = CHANGE_COLOUR;
      ctx.fillRect(x + c * w, y, Math.max(1, Math.min(2, w)), h - 1);
    }
  }
}

/**
 * The Tensor Values view's arithmetic, with no DOM and no fetching: which 2-D plane of an N-d tensor is shown (a row
 * axis, a column axis, every other axis fixed at an index), the slice strings asked of the `tensor` route for a
 * window of that plane and for its heatmap, and where a value of an answered slice lies.
 */
import type { Num, TensorSlice } from '../api/wire.ts';

/** Elements the server answers per slice at most (tensor_slices.MAX_SLICE_ELEMENTS). */
export const SLICE_CAP = 65536;
/** The grid's window of the plane: WINDOW x WINDOW cells (4,096 values), moved as the grid scrolls. */
export const WINDOW = 64;
/** The heatmap samples the plane down to at most HEAT x HEAT pixels (a strided slice). */
export const HEAT = 256;

export interface Plane {
  /** The tensor axis shown as rows / columns; null when the tensor has too few axes (0-d: one cell; 1-d: a column). */
  rowAxis: number | null;
  colAxis: number | null;
  /** An index per axis: where the fixed axes stand (the row and column entries are ignored). */
  fixed: number[];
}

export interface Window {
  r0: number;
  c0: number;
  rows: number;
  cols: number;
}

/** The last two axes as rows and columns (a 1-d tensor is one column). */
export function defaultPlane(shape: number[]): Plane {
  const n = shape.length;
  return { rowAxis: n >= 1 ? (n >= 2 ? n - 2 : 0) : null, colAxis: n >= 2 ? n - 1 : null, fixed: shape.map(() => 0) };
}

/** Rows and columns of the plane. */
export function planeSize(shape: number[], p: Plane): { rows: number; cols: number } {
  return {
    rows: p.rowAxis === null ? 1 : (shape[p.rowAxis] ?? 1),
    cols: p.colAxis === null ? 1 : (shape[p.colAxis] ?? 1),
  };
}

/** Chooses the row and column axes; the column axis moves away when both would be the same. */
export function withAxes(shape: number[], p: Plane, rowAxis: number, colAxis: number | null): Plane {
  let col = colAxis;
  if (col === rowAxis) col = shape.findIndex((_, k) => k !== rowAxis);
  return { ...p, rowAxis, colAxis: col === -1 ? null : col };
}

function sliceSpec(shape: number[], p: Plane, rows: string, cols: string): string {
  if (shape.length === 0) return '...';
  return shape.map((_, k) => (k === p.rowAxis ? rows : k === p.colAxis ? cols : String(p.fixed[k] ?? 0))).join(',');
}

/** The slice of a window of the plane (clamped to it). */
export function windowSpec(shape: number[], p: Plane, w: Window): string {
  const { rows, cols } = planeSize(shape, p);
  const r1 = Math.min(rows, w.r0 + w.rows);
  const c1 = Math.min(cols, w.c0 + w.cols);
  return sliceSpec(shape, p, `${w.r0}:${r1}`, `${w.c0}:${c1}`);
}

/** Steps that sample the plane down to at most HEAT x HEAT, and the strided slice that does it. */
export function heatSteps(shape: number[], p: Plane): [number, number] {
  const { rows, cols } = planeSize(shape, p);
  return [Math.max(1, Math.ceil(rows / HEAT)), Math.max(1, Math.ceil(cols / HEAT))];
}

export function heatSpec(shape: number[], p: Plane): string {
  const [sr, sc] = heatSteps(shape, p);
  return sliceSpec(shape, p, `::${sr}`, `::${sc}`);
}

/** A window of WINDOW x WINDOW around (row, col), aligned to half a window so small moves reuse it. */
export function windowAround(shape: number[], p: Plane, row: number, col: number): Window {
  const { rows, cols } = planeSize(shape, p);
  const half = WINDOW / 2;
  const r0 = Math.max(0, Math.min(Math.floor((row - half / 2) / half) * half, rows - WINDOW));
  const c0 = Math.max(0, Math.min(Math.floor((col - half / 2) / half) * half, cols - WINDOW));
  return { r0, c0, rows: WINDOW, cols: WINDOW };
}

/** True when cells [r0, r1) x [c0, c1) all lie inside window `w`. */
export function covers(w: Window, r0: number, r1: number, c0: number, c1: number): boolean {
  return r0 >= w.r0 && c0 >= w.c0 && r1 <= w.r0 + w.rows && c1 <= w.c0 + w.cols;
}

/** The value at plane cell (r, c) of a slice answered for window `w` (numpy keeps the axes in tensor order, so a
 * row axis after the column axis comes out transposed); undefined outside it. */
export function valueAt(
  slice: TensorSlice,
  p: Plane,
  w: Window,
  r: number,
  c: number,
): Num | boolean | string | undefined {
  const rr = r - w.r0;
  const cc = c - w.c0;
  const nRows = p.rowAxis === null ? 1 : (slice.shape[p.colAxis !== null && p.colAxis < p.rowAxis ? 1 : 0] ?? 0);
  const nCols = p.colAxis === null ? 1 : (slice.shape[p.rowAxis !== null && p.rowAxis > p.colAxis ? 0 : 1] ?? 0);
  if (rr < 0 || cc < 0 || rr >= nRows || cc >= nCols) return undefined;
  const transposed = p.rowAxis !== null && p.colAxis !== null && p.rowAxis > p.colAxis;
  return slice.values[transposed ? cc * nRows + rr : rr * nCols + cc];
}

/** The full index of plane cell (r, c). */
export function indexOf(p: Plane, r: number, c: number): number[] {
  return p.fixed.map((v, k) => (k === p.rowAxis ? r : k === p.colAxis ? c : v));
}

/** The plane that shows position `pos` (its fixed axes set to it), and the plane cell it is at. */
export function planeAt(p: Plane, pos: number[]): { plane: Plane; row: number; col: number } {
  return {
    plane: { ...p, fixed: [...pos] },
    row: p.rowAxis === null ? 0 : (pos[p.rowAxis] ?? 0),
    col: p.colAxis === null ? 0 : (pos[p.colAxis] ?? 0),
  };
}

/** A value as a number for colouring (NaN, ±Infinity spelled as the wire does; booleans 0/1); null for text. */
export function numeric(v: Num | boolean | string | undefined): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v === 'NaN') return NaN;
  if (v === 'Infinity') return Infinity;
  if (v === '-Infinity') return -Infinity;
  return null;
}

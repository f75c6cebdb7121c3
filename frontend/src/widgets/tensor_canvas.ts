/**
 * Canvas drawings of tensor values: a heatmap of a 2-D sample (finite values on a blue → yellow ramp between the
 * tensor's min and max; NaN, +∞ and −∞ in their own colours, with a legend) and a histogram of the finite values
 * with the non-finite counts beside it. Values arrive as numbers (NaN/±Infinity already decoded) by cell.
 */
import { el } from './panel.ts';

/** The fixed colours of the classes a ramp cannot show (match the --nan/--posinf/--neginf palette). */
export const CLASS_COLOURS = { nan: '#d81b60', posinf: '#ff6f00', neginf: '#00acc1' } as const;

/** Viridis-like ramp stops (dark blue → teal → yellow). */
const RAMP: [number, number, number][] = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];

export function rampColour(t: number): [number, number, number] {
  const x = Math.max(0, Math.min(1, t)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(x));
  const f = x - i;
  const a = RAMP[i]!;
  const b = RAMP[i + 1]!;
  return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f];
}

function hex(c: string): [number, number, number] {
  return [parseInt(c.slice(1, 3), 16), parseInt(c.slice(3, 5), 16), parseInt(c.slice(5, 7), 16)];
}

const NAN_RGB = hex(CLASS_COLOURS.nan);
const POS_RGB = hex(CLASS_COLOURS.posinf);
const NEG_RGB = hex(CLASS_COLOURS.neginf);

/** Draws rows x cols values (value(r, c): a number, or null for text) into `canvas`, one pixel per value, scaled
 * up by CSS. */
export function drawHeatmap(
  canvas: HTMLCanvasElement,
  rows: number,
  cols: number,
  value: (r: number, c: number) => number | null,
  min: number,
  max: number,
): void {
  canvas.width = Math.max(1, cols);
  canvas.height = Math.max(1, rows);
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const img = ctx.createImageData(canvas.width, canvas.height);
  const span = max > min ? max - min : 1;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const v = value(r, c);
      const rgb =
        v === null
          ? ([128, 128, 128] as [number, number, number])
          : Number.isNaN(v)
            ? NAN_RGB
            : v === Infinity
              ? POS_RGB
              : v === -Infinity
                ? NEG_RGB
                : rampColour((v - min) / span);
      const at = (r * cols + c) * 4;
      img.data[at] = rgb[0];
      img.data[at + 1] = rgb[1];
      img.data[at + 2] = rgb[2];
      img.data[at + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
}

/** The legend: the ramp with its min and max, and a swatch per non-finite class. */
export function heatLegend(min: string, max: string): HTMLElement {
  const legend = el('div', 'tv-legend');
  legend.dataset.testid = 'tv-legend';
  const ramp = el('span', 'tv-ramp');
  ramp.style.background = `linear-gradient(to right, ${RAMP.map((c) => `rgb(${c.join(',')})`).join(', ')})`;
  legend.append(el('span', 'muted', min), ramp, el('span', 'muted', max));
  for (const [cls, label] of [
    ['nan', 'NaN'],
    ['posinf', '+∞'],
    ['neginf', '−∞'],
  ] as const) {
    const sw = el('span', 'tv-swatch');
    sw.style.background = CLASS_COLOURS[cls];
    legend.append(sw, el('span', '', label));
  }
  return legend;
}

/** Bars of `counts` (log-free, scaled to the tallest), drawn `width` x `height` CSS pixels. */
export function drawHistogram(canvas: HTMLCanvasElement, counts: number[], width: number, height: number): void {
  const ratio = typeof window !== 'undefined' ? window.devicePixelRatio || 1 : 1;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  ctx.scale(ratio, ratio);
  ctx.clearRect(0, 0, width, height);
  const top = Math.max(1, ...counts);
  const bw = width / Math.max(1, counts.length);
  ctx.fillStyle = '#5c6bc0';
  counts.forEach((n, i) => {
    const h = n > 0 ? Math.max(1, (n / top) * (height - 2)) : 0;
    ctx.fillRect(i * bw, height - h, Math.max(1, bw - 1), h);
  });
}

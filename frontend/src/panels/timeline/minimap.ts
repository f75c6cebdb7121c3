/**
 * The timeline's minimap: the whole run as one strip, every NaN/∞ alert marked where it falls (a canvas of the
 * server's bins: thousands of alerts draw as fast as ten), the window on screen outlined. A click centres the
 * timeline there; a drag selects a range of executions to zoom to.
 */
import type { TimelineMarksResponse } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';

/** Pixels the pointer must move before a press is a drag (a range) rather than a click. */
const DRAG_PX = 4;

export interface MinimapIntents {
  /** A click at `fraction` (0..1) of the run. */
  centre(fraction: number): void;
  /** A drag over [from, to) (fractions of the run, from < to). */
  range(from: number, to: number): void;
}

export class Minimap {
  readonly element = el('div', 'tl-minimap');
  private canvas = el('canvas', 'tl-marks');
  private window = el('span', 'tl-window');
  private selection = el('span', 'tl-selection');
  /** Alerts the bins cannot place (written after the last execution record), said rather than left blank. */
  private after = el('span', 'tl-after');
  private marks: TimelineMarksResponse | null = null;
  private total = 0;
  private dragFrom: number | null = null;
  private dragged = false;

  constructor(private readonly intents: MinimapIntents) {
    this.element.dataset.testid = 'tl-minimap';
    this.element.title = 'The whole run; red marks are NaN/∞ alerts. Click to go there, drag to zoom to a range.';
    this.window.dataset.testid = 'tl-window';
    this.selection.hidden = true;
    this.after.dataset.testid = 'tl-after';
    this.after.hidden = true;
    this.element.append(this.canvas, this.window, this.selection, this.after);
    this.element.addEventListener('pointerdown', (e) => this.press(e));
    this.element.addEventListener('pointermove', (e) => this.move(e));
    this.element.addEventListener('pointerup', (e) => this.release(e));
    new ResizeObserver(() => this.paint()).observe(this.element);
  }

  /** The run's marks (null: not known yet), its execution count and the window [begin, begin + size). */
  draw(marks: TimelineMarksResponse | null, total: number, begin: number, size: number): void {
    this.marks = marks;
    this.total = total;
    this.window.style.left = `${total ? (100 * begin) / total : 0}%`;
    this.window.style.width = `${total ? Math.max(0.5, (100 * Math.min(size, total)) / total) : 100}%`;
    const marked = marks ? marks.counts.filter((c) => c > 0).length : 0;
    this.element.dataset.alerts = String(marks?.alerts ?? 0);
    this.element.dataset.markedBins = String(marked);
    const after = afterLastText(marks);
    this.after.textContent = after;
    this.after.hidden = !after;
    this.paint();
  }

  private fraction(e: PointerEvent): number {
    const r = this.element.getBoundingClientRect();
    return Math.min(1, Math.max(0, (e.clientX - r.left) / Math.max(1, r.width)));
  }

  private press(e: PointerEvent): void {
    this.dragFrom = this.fraction(e);
    this.dragged = false;
    this.element.setPointerCapture(e.pointerId);
  }

  private move(e: PointerEvent): void {
    if (this.dragFrom === null) return;
    const width = this.element.getBoundingClientRect().width;
    const to = this.fraction(e);
    if (!this.dragged && Math.abs(to - this.dragFrom) * width < DRAG_PX) return;
    this.dragged = true;
    const [a, b] = this.dragFrom < to ? [this.dragFrom, to] : [to, this.dragFrom];
    this.selection.hidden = false;
    this.selection.style.left = `${100 * a}%`;
    this.selection.style.width = `${100 * (b - a)}%`;
  }

  private release(e: PointerEvent): void {
    if (this.dragFrom === null) return;
    const from = this.dragFrom;
    const to = this.fraction(e);
    this.dragFrom = null;
    this.selection.hidden = true;
    if (!this.dragged) this.intents.centre(to);
    else this.intents.range(Math.min(from, to), Math.max(from, to));
  }

  /** One bar per bin holding alerts, taller for more (log scale), at least a device pixel wide. */
  private paint(): void {
    const ratio = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(this.element.clientWidth * ratio));
    const h = Math.max(1, Math.round(this.element.clientHeight * ratio));
    if (this.canvas.width !== w) this.canvas.width = w;
    if (this.canvas.height !== h) this.canvas.height = h;
    const g = this.canvas.getContext('2d');
    if (!g) return;
    g.clearRect(0, 0, w, h);
    const m = this.marks;
    if (!m || this.total <= 0) return;
    g.fillStyle = getComputedStyle(this.element).getPropertyValue('--nan').trim() || '#d32f2f';
    const most = Math.log1p(Math.max(1, ...m.counts));
    m.counts.forEach((count, i) => {
      if (count <= 0) return;
      const x0 = (m.edges[i]! / this.total) * w;
      const x1 = (m.edges[i + 1]! / this.total) * w;
      const bar = h * (0.45 + (0.55 * Math.log1p(count)) / most);
      g.fillRect(Math.floor(x0), h - bar, Math.max(Math.ceil(ratio), x1 - x0), bar);
    });
  }
}

/** What the minimap says of alerts written after the last execution record ('' when there are none): a trace of
 * a call whose record was never written (the program stopped, or its buffer was not flushed) has no place. */
export function afterLastText(marks: Pick<TimelineMarksResponse, 'alerts' | 'after_last'> | null): string {
  const n = marks?.after_last ?? 0;
  if (!marks || n <= 0) return '';
  const count = `${n.toLocaleString('en-US')} alert${n === 1 ? '' : 's'}`;
  return n >= marks.alerts
    ? `every alert (${count}) comes after the last execution record: none to mark here`
    : `+ ${count} after the last execution record`;
}

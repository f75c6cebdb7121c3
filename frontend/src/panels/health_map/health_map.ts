/**
 * Health over time (#18): an op x step map over the dashboard, one canvas. Rows are op outputs (NaN/∞ ones first),
 * columns step bins (the server aggregates: analysis/health_map.py); a cell is red when a trace in it held NaN/∞,
 * else shaded by the zero fraction, with an amber tick where the shape or dtype changed. Clicking a cell focuses the
 * trace it stands for everywhere (Graph Execution, Graph Structure, Source Code), marks the cell and docks the map
 * to the lower half, so the focus it made is in view above it. A tooltip says what a cell holds (and an op's whole
 * name); a filter keeps the ops whose name or type holds a text.
 */
import type { Controller } from '../../controller/controller.ts';
import type { State } from '../../store/store.ts';
import type { HealthMapResponse, HealthMapRow } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';
import { drawCells, prepareCanvas } from '../../widgets/health_cells.ts';

const LABEL_W = 220;
const CELL_H = 14;
const HEAD_H = 18;

export class HealthMapPanel {
  readonly element = el('section', 'health-map');
  private readonly canvas = el('canvas', 'health-map-canvas');
  private readonly info = el('span', 'muted');
  private readonly prev = el('button', 'alert-nav', '↑ rows');
  private readonly next = el('button', 'alert-nav', 'rows ↓');
  private cellW = 4;
  private readonly filter = el('input', 'health-map-filter');
  private readonly tip = el('div', 'health-map-tip');
  private readonly dock = el('button', 'alert-nav');
  /** The clicked cell (its op's kind and column), outlined until another is clicked. */
  private marked: { kind: number; column: number } | null = null;

  constructor(private readonly ctl: Controller) {
    this.element.dataset.testid = 'health-map';
    this.canvas.dataset.testid = 'health-map-canvas';
    this.element.hidden = true;
    const close = el('button', 'alert-nav', 'Close');
    close.dataset.testid = 'close-health-map';
    close.addEventListener('click', () => ctl.rules.showHealthMap(false));
    this.prev.addEventListener('click', () => this.page(-1));
    this.next.addEventListener('click', () => this.page(1));
    const head = el('header', 'panel-head');
    this.filter.placeholder = 'filter ops';
    this.filter.title = 'Only ops whose name or type holds this text';
    this.filter.dataset.testid = 'health-map-filter';
    let timer: ReturnType<typeof setTimeout> | undefined;
    this.filter.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => ctl.rules.filterHealthMap(this.filter.value.trim()), 250);
    });
    this.dock.dataset.testid = 'dock-health-map';
    this.dock.addEventListener('click', () => this.setDocked(!this.element.classList.contains('docked')));
    this.setDocked(false);
    this.tip.dataset.testid = 'health-map-tip';
    this.tip.hidden = true;
    head.append(el('span', 'panel-title', 'Health over time'), this.filter, this.info, this.prev, this.next);
    head.append(this.dock, close);
    const legend = el(
      'div',
      'health-map-legend muted',
      'red: NaN/∞ · green, darker: more zeros · amber tick: shape/dtype changed · grey: not recorded',
    );
    const scroller = el('div', 'health-map-scroll');
    scroller.append(this.canvas);
    this.element.append(head, legend, scroller, this.tip);
    this.canvas.addEventListener('click', (e) => this.click(e));
    this.canvas.addEventListener('mousemove', (e) => this.hover(e));
    this.canvas.addEventListener('mouseleave', () => (this.tip.hidden = true));
    ctl.store.subscribe((s, p) => {
      if (s.healthMapOpen !== p.healthMapOpen || s.healthMap !== p.healthMap) this.render(s);
    });
  }

  /** Docked: the map takes the lower half only, the panels above show what a click focused. */
  private setDocked(docked: boolean): void {
    this.element.classList.toggle('docked', docked);
    this.dock.textContent = docked ? '⤢ Full' : '⤓ Dock';
    this.dock.title = docked ? 'Show the map over the whole dashboard' : 'Show the map in the lower half only';
  }

  private page(dir: number): void {
    this.ctl.rules.pageHealthMap(dir);
  }

  private render(s: State): void {
    this.element.hidden = !s.healthMapOpen;
    const m = s.healthMap.data;
    if (!s.healthMapOpen) return this.setDocked(false);
    if (this.filter.value.trim() !== s.healthMapOps) this.filter.value = s.healthMapOps;
    if (!m) {
      this.info.textContent = s.healthMap.status === 'error' ? `error: ${s.healthMap.error}` : 'Loading…';
      return;
    }
    this.info.textContent =
      `ops ${m.total ? m.begin + 1 : 0}–${m.end} of ${m.total.toLocaleString('en-US')} · ` +
      `${m.steps.toLocaleString('en-US')} traces per op, ${m.bin} per cell`;
    this.prev.disabled = m.begin === 0;
    this.next.disabled = m.end >= m.total;
    this.draw(m);
  }

  private draw(m: HealthMapResponse): void {
    const width = Math.max(this.element.clientWidth - 24, LABEL_W + 100);
    this.cellW = Math.max(2, Math.floor((width - LABEL_W) / Math.max(m.columns, 1)));
    const ctx = prepareCanvas(this.canvas, LABEL_W + this.cellW * m.columns, HEAD_H + CELL_H * m.rows.length);
    // geometry for a test or a tool to hit a cell without reading pixels
    Object.assign(this.canvas.dataset, {
      labelWidth: String(LABEL_W),
      cellWidth: String(this.cellW),
      cellHeight: String(CELL_H),
      headerHeight: String(HEAD_H),
      begin: String(m.begin),
    });
    if (!ctx) return;
    ctx.font = '11px sans-serif';
    ctx.fillStyle = getComputedStyle(this.element).color || '#000';
    for (let c = 0; c < m.columns; c += Math.max(1, Math.ceil(60 / this.cellW))) {
      ctx.fillText(String(m.step_begin + c * m.bin + 1), LABEL_W + c * this.cellW, 12);
    }
    m.rows.forEach((row, r) => {
      const y = HEAD_H + r * CELL_H;
      this.drawLabel(ctx, row, y + CELL_H - 3);
      drawCells(ctx, row, LABEL_W, y, this.cellW, CELL_H);
      if (this.marked?.kind === row.kind) this.outline(ctx, this.marked.column, y);
    });
  }

  /** The row's op (red once non-finite) then, muted, its graph: op names repeat across a retraced function's
   * graphs, the graph tells the rows apart. The op gets at most two thirds of the label, the graph the rest. */
  private drawLabel(ctx: CanvasRenderingContext2D, row: HealthMapRow, baseline: number): void {
    const colour = getComputedStyle(this.element).color || '#000';
    const slot = row.output_slot ? `:${row.output_slot}` : '';
    const room = LABEL_W - 6;
    const op = clip(ctx, `${row.op_name}${slot}`, (room * 2) / 3);
    const sep = ' · ';
    const left = room - ctx.measureText(op + sep).width;
    const graph = sep + clip(ctx, row.graph_name, left); // clip keeps its end: the number of a retrace
    ctx.fillStyle = row.first_nonfinite_step !== null ? '#d32f2f' : colour;
    ctx.fillText(op, 2, baseline);
    ctx.fillStyle = getComputedStyle(this.element).getPropertyValue('--muted') || colour;
    ctx.fillText(graph, 2 + ctx.measureText(op).width, baseline);
  }

  private outline(ctx: CanvasRenderingContext2D, column: number, y: number): void {
    ctx.strokeStyle = getComputedStyle(this.element).getPropertyValue('--link') || '#0d47a1';
    ctx.lineWidth = 2;
    ctx.strokeRect(LABEL_W + column * this.cellW - 1, y - 1, this.cellW + 2, CELL_H + 2);
  }

  /** The row and column under the pointer (column -1 over the op names). */
  private cellAt(e: MouseEvent): { row: HealthMapRow; r: number; c: number } | null {
    const m = this.ctl.store.state.healthMap.data;
    if (!m) return null;
    const rect = this.canvas.getBoundingClientRect();
    const r = Math.floor((e.clientY - rect.top - HEAD_H) / CELL_H);
    const x = e.clientX - rect.left - LABEL_W;
    const c = x < 0 ? -1 : Math.floor(x / this.cellW);
    const row = m.rows[r];
    return row && c < m.columns ? { row, r, c } : null;
  }

  private hover(e: MouseEvent): void {
    const m = this.ctl.store.state.healthMap.data;
    const at = this.cellAt(e);
    this.tip.hidden = !at || !m;
    if (!at || !m) return;
    this.tip.textContent = cellText(at.row, at.c, m);
    const box = this.element.getBoundingClientRect();
    this.tip.style.left = `${Math.min(e.clientX - box.left + 12, box.width - 320)}px`;
    this.tip.style.top = `${e.clientY - box.top + 14}px`;
  }

  private click(e: MouseEvent): void {
    const m = this.ctl.store.state.healthMap.data;
    const at = this.cellAt(e);
    const trace = at && at.c >= 0 ? at.row.trace[at.c] : undefined;
    if (!m || !at || trace === undefined || trace < 0) return;
    this.marked = { kind: at.row.kind, column: at.c };
    this.canvas.dataset.markedTrace = String(trace);
    this.setDocked(true);
    this.draw(m);
    void this.ctl.focusGraphExecution(trace);
  }
}

function clip(ctx: CanvasRenderingContext2D, text: string, width: number): string {
  if (ctx.measureText(text).width <= width) return text;
  let t = text;
  while (t.length > 1 && ctx.measureText('…' + t).width > width) t = t.slice(1);
  return '…' + t; // the end of an op name says most (its own name, not its scopes)
}

/** A cell's tooltip: the op (whole name, type, slot), the cell's steps and what they held. */
function cellText(row: HealthMapRow, c: number, m: HealthMapResponse): string {
  const slot = row.output_slot ? `:${row.output_slot}` : '';
  const op = `${row.op_name}${slot} (${row.op_type}) in ${row.graph_name}`;
  if (c < 0) return `${op} · ${row.steps.toLocaleString('en-US')} traces`;
  const first = m.step_begin + c * m.bin + 1;
  const last = Math.min(first + m.bin - 1, m.step_end);
  const steps = first === last ? `trace ${first}` : `traces ${first}–${last}`;
  if ((row.trace[c] ?? -1) < 0) return `${op}\n${steps}: not recorded`;
  const bad = row.nonfinite[c] ?? 0;
  const zero = row.zero[c];
  const parts = [
    bad ? `${bad.toLocaleString('en-US')} trace${bad === 1 ? '' : 's'} with NaN/∞` : 'finite',
    typeof zero === 'number' ? `${Math.round(zero * 100)}% zeros` : '',
    row.changed[c] ? 'shape/dtype changed' : '',
  ].filter(Boolean);
  return `${op}\n${steps}: ${parts.join(' · ')}\nclick: focus trace #${row.trace[c]}`;
}

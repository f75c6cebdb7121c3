/**
 * Health over time (#18): an op x step map over the dashboard, one canvas. Rows are op outputs (NaN/∞ ones first),
 * columns step bins (the server aggregates: analysis/health_map.py); a cell is red when a trace in it held NaN/∞,
 * else shaded by the zero fraction, with an amber tick where the shape or dtype changed. Clicking a cell focuses the
 * trace it stands for everywhere (Graph Execution, Graph Structure, Source Code).
 */
import type { Controller } from '../../controller/controller.ts';
import type { State } from '../../store/store.ts';
import type { HealthMapResponse } from '../../api/wire.ts';
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
    head.append(el('span', 'panel-title', 'Health over time'), this.info, this.prev, this.next, close);
    const legend = el(
      'div',
      'health-map-legend muted',
      'red: NaN/∞ · green, darker: more zeros · amber tick: shape/dtype changed · grey: not recorded',
    );
    const scroller = el('div', 'health-map-scroll');
    scroller.append(this.canvas);
    this.element.append(head, legend, scroller);
    this.canvas.addEventListener('click', (e) => this.click(e));
    ctl.store.subscribe((s, p) => {
      if (s.healthMapOpen !== p.healthMapOpen || s.healthMap !== p.healthMap) this.render(s);
    });
  }

  private page(dir: number): void {
    this.ctl.rules.pageHealthMap(dir);
  }

  private render(s: State): void {
    this.element.hidden = !s.healthMapOpen;
    const m = s.healthMap.data;
    if (!s.healthMapOpen) return;
    if (!m) {
      this.info.textContent = s.healthMap.status === 'error' ? `error: ${s.healthMap.error}` : 'Loading…';
      return;
    }
    this.info.textContent =
      `ops ${m.total ? m.begin + 1 : 0}–${m.end} of ${m.total.toLocaleString('en-US')} · ` +
      `${m.steps.toLocaleString('en-US')} steps, ${m.bin} per cell`;
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
      ctx.fillStyle = row.first_nonfinite_step !== null ? '#d32f2f' : getComputedStyle(this.element).color || '#000';
      const slot = row.output_slot ? `:${row.output_slot}` : '';
      ctx.fillText(clip(ctx, `${row.op_name}${slot}`, LABEL_W - 6), 2, y + CELL_H - 3);
      drawCells(ctx, row, LABEL_W, y, this.cellW, CELL_H);
    });
  }

  private click(e: MouseEvent): void {
    const m = this.ctl.store.state.healthMap.data;
    if (!m) return;
    const rect = this.canvas.getBoundingClientRect();
    const r = Math.floor((e.clientY - rect.top - HEAD_H) / CELL_H);
    const c = Math.floor((e.clientX - rect.left - LABEL_W) / this.cellW);
    const trace = m.rows[r]?.trace[c];
    if (trace !== undefined && trace >= 0) void this.ctl.focusGraphExecution(trace);
  }
}

function clip(ctx: CanvasRenderingContext2D, text: string, width: number): string {
  if (ctx.measureText(text).width <= width) return text;
  let t = text;
  while (t.length > 1 && ctx.measureText('…' + t).width > width) t = t.slice(1);
  return '…' + t; // the end of an op name says most (its own name, not its scopes)
}

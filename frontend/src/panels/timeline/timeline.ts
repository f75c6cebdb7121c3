/**
 * Python Execution Timeline: one box per eager execution (op or tf.function call), lettered (or named, zoomed in)
 * by its name, coloured by kind, alert boxes marked; paging with </>, zoom with the wheel, +/- or a range dragged on
 * the minimap, which shows where every alert of the run falls. Clicking a box focuses that execution (detail here
 * and in Graph Structure, stack in Stack Trace); a tf.function call opens (double-click, Enter or its detail's
 * button): its traces in Graph Execution, its graph drawn.
 */
import type { Controller } from '../../controller/controller.ts';
import type { State } from '../../store/store.ts';
import type { ExecutionDetail, ExecutionDigest, NoticeCode } from '../../api/wire.ts';
import { Panel, el } from '../../widgets/panel.ts';
import { renderHealth } from '../../widgets/health.ts';
import { emptyReason, noRunState } from '../../widgets/notices.ts';
import type { Readiness } from '../../ready.ts';
import { timelineKeyTarget } from '../../store/focus_math.ts';
import { functionKind } from '../../widgets/graph_names.ts';
import { Minimap } from './minimap.ts';

/** A box's pitch (width plus gap) at the start, and the widest it gets zoomed in. */
const PITCH = 24;
const MAX_PITCH = 200;
/** Wheel and +/- zoom step. */
const ZOOM_STEP = 1.25;
/** Horizontal padding of the box strip. */
const PAD = 12;

/** Display name: a function call's name without TF's `__inference_` prefix and numeric suffix. */
export function shortName(opType: string): string {
  const m = /^__(?:inference|forward|backward)_(.+?)(?:_\d+)?$/.exec(opType);
  return m ? m[1]! : opType;
}

export function letterOf(opType: string): string {
  const s = shortName(opType).replace(/^_+/, '');
  return (s[0] ?? '?').toUpperCase();
}

/** What a box of `pitch` pixels shows: the name when wide, a letter when it fits, nothing when thin. */
export function boxLabel(opType: string, pitch: number): string {
  if (pitch >= 60) return shortName(opType);
  return pitch >= 14 ? letterOf(opType) : '';
}

export class TimelinePanel {
  readonly panel = new Panel('Python Execution Timeline', 'panel-timeline');
  private minimap: Minimap;
  private boxes = el('div', 'tl-boxes');
  private range = el('span', 'tl-range');
  private prev = el('button', 'tl-page', '‹');
  private next = el('button', 'tl-page', '›');
  private zoomOut = el('button', 'tl-zoom', '−');
  private zoomIn = el('button', 'tl-zoom', '+');
  private detail = el('div', 'tl-detail');
  /** Pixels per box (its width and gap): the zoom. The window's size follows from it and the strip's width. */
  private pitch = PITCH;
  /** The first page of a newly selected run is still to be drawn (readiness). */
  private readyPending = false;

  constructor(
    private readonly ctl: Controller,
    private readonly readiness: Readiness,
  ) {
    this.minimap = new Minimap({
      centre: (f) => ctl.timeline.centreOn(Math.floor(f * this.total())),
      range: (a, b) => ctl.timeline.showRange(Math.floor(a * this.total()), Math.ceil(b * this.total())),
    });
    this.buildTools();
    this.boxes.dataset.testid = 'tl-boxes';
    this.detail.dataset.testid = 'tl-detail';
    this.panel.body.append(this.minimap.element, this.boxes, this.detail);
    this.boxes.tabIndex = 0;
    this.boxes.addEventListener('keydown', (e) => this.onKey(e));
    this.boxes.addEventListener('wheel', (e) => this.onWheel(e), { passive: false });
    new ResizeObserver(() => ctl.timeline.resize(this.fitting(this.pitch))).observe(this.boxes);
    ctl.store.subscribe((s, p) => this.update(s, p));
  }

  private buildTools(): void {
    const buttons: [HTMLElement, string, string][] = [
      [this.prev, 'tl-prev', 'Earlier executions'],
      [this.next, 'tl-next', 'Later executions'],
      [this.zoomOut, 'tl-zoom-out', 'Zoom out: more executions (−, or the wheel)'],
      [this.zoomIn, 'tl-zoom-in', 'Zoom in: fewer, wider boxes (+, or the wheel)'],
    ];
    for (const [b, id, title] of buttons) {
      b.dataset.testid = id;
      b.title = title;
    }
    this.range.dataset.testid = 'tl-range';
    this.panel.tools.append(this.prev, this.range, this.next, this.zoomOut, this.zoomIn);
    this.prev.addEventListener('click', () => this.ctl.timeline.page(-1));
    this.next.addEventListener('click', () => this.ctl.timeline.page(1));
    this.zoomOut.addEventListener('click', () => this.zoom(ZOOM_STEP, 0.5));
    this.zoomIn.addEventListener('click', () => this.zoom(1 / ZOOM_STEP, 0.5));
  }

  /** Boxes of `pitch` pixels that fit the strip. */
  private fitting(pitch: number): number {
    return Math.max(1, Math.floor((this.boxes.clientWidth - PAD) / pitch));
  }

  /** Zooms by `factor` (> 1: out, more executions) keeping the execution at `fraction` of the width in place. */
  private zoom(factor: number, fraction: number): void {
    const t = this.ctl.store.state.timeline;
    const width = Math.max(1, this.boxes.clientWidth - PAD);
    const size = Math.max(Math.ceil(width / MAX_PITCH), Math.round(t.size * factor));
    if (size === t.size) return;
    this.ctl.timeline.zoom(size, t.begin + fraction * t.size, fraction);
  }

  private onWheel(e: WheelEvent): void {
    if (Math.abs(e.deltaY) < Math.abs(e.deltaX)) return; // a sideways swipe is not a zoom
    e.preventDefault();
    const r = this.boxes.getBoundingClientRect();
    this.zoom(e.deltaY > 0 ? ZOOM_STEP : 1 / ZOOM_STEP, (e.clientX - r.left - PAD / 2) / Math.max(1, r.width - PAD));
  }

  /** The run's executions (the server's latest page total when it knows more than the last poll). */
  private total(): number {
    const s = this.ctl.store.state;
    return s.timeline.page.data?.total ?? this.ctl.store.runInfo()?.counts.executions ?? 0;
  }

  /** One Tab stop (the box strip); inside it arrows move by one, PageUp/PageDown by a window, Home/End to the ends,
   * +/- zoom, Enter opens the focused tf.function call. */
  private onKey(e: KeyboardEvent): void {
    const s = this.ctl.store.state;
    const focused = s.focus?.kind === 'execution' ? s.focus.index : null;
    if (e.key === '+' || e.key === '=' || e.key === '-') {
      e.preventDefault();
      this.zoom(e.key === '-' ? ZOOM_STEP : 1 / ZOOM_STEP, 0.5);
      return;
    }
    if (e.key === 'Enter' && focused !== null) {
      const box = this.boxes.querySelector<HTMLElement>(`[data-index="${focused}"]`);
      if (box?.classList.contains('fn')) void this.ctl.openCall(focused);
      return;
    }
    const n = timelineKeyTarget(e.key, focused, s.timeline.begin, s.timeline.size, this.total());
    if (n === null) return;
    e.preventDefault();
    if (n !== focused) void this.ctl.focusExecution(n);
  }

  private update(s: State, prev: State): void {
    if (s.run === null) {
      this.boxes.replaceChildren();
      this.minimap.draw(null, 0, 0, 0);
      this.range.textContent = '';
      this.panel.setState(noRunState(s));
      return;
    }
    const kind = functionKind(this.ctl.store.runInfo()?.framework);
    this.boxes.title = `Wheel or +/− to zoom; double-click or Enter on a ${kind} call opens it.`;
    if (s.run !== prev.run) {
      this.detail.replaceChildren();
      this.readiness.begin('timeline');
      this.readyPending = true;
    }
    const t = s.timeline;
    if (t.page !== prev.timeline.page || s.run !== prev.run) this.renderPage(s);
    else if (t.page.status === 'idle' && s.runs !== prev.runs) this.showEmpty(); // the reason follows the notices
    if (t !== prev.timeline || s.timelineMarks !== prev.timelineMarks)
      this.minimap.draw(s.timelineMarks, this.total(), t.begin, t.size);
    if (s.focus !== prev.focus || s.geFilters.call !== prev.geFilters.call || s.focusDetail !== prev.focusDetail)
      this.markFocus();
    if (s.focusDetail !== prev.focusDetail) this.renderDetail(s);
  }

  private renderPage(s: State): void {
    const page = s.timeline.page;
    if (page.status === 'loading') return; // the boxes on screen stay until the new page comes
    if (page.status === 'idle') {
      this.boxes.replaceChildren();
      this.range.textContent = '';
      this.showEmpty();
    } else if (page.status === 'error') {
      this.panel.setState({ kind: 'error', text: `Could not load executions: ${page.error}` });
    } else if (page.data) {
      this.renderBoxes(page.data.begin, s.timeline.size, page.data.executions, page.data.total);
      this.panel.setState({ kind: 'content' });
    }
    if (this.readyPending) {
      this.readyPending = false;
      this.readiness.end('timeline');
    }
  }

  /** The empty timeline's reason: an unreadable or missing execution file first (not "no executions"). */
  private showEmpty(): void {
    const explanations: NoticeCode[] = ['no_executions', 'circular_buffer'];
    const info = this.ctl.store.runInfo();
    this.panel.setState(emptyReason(info, explanations, 'This run has no eager executions.', ['execution']));
  }

  private renderBoxes(begin: number, size: number, list: ExecutionDigest[], total: number): void {
    this.pitch = Math.max(1, (this.boxes.clientWidth - PAD) / Math.max(1, size)) || PITCH;
    const gap = this.pitch >= 6 ? 2 : 0;
    this.boxes.style.gap = `${gap}px`;
    this.boxes.classList.toggle('thin', this.pitch < 12); // no border or padding: a box is a coloured bar
    const width = `${Math.max(1, this.pitch - gap)}px`;
    const els = list.map((ex) => {
      const b = el('button', `tl-box ${ex.is_function ? 'fn' : 'op'}${ex.alert ? ' alert' : ''}`);
      b.textContent = boxLabel(ex.op_type, this.pitch);
      b.style.width = width;
      b.dataset.testid = 'tl-box';
      b.tabIndex = -1; // the strip is the one Tab stop; arrows move inside it
      b.dataset.index = String(ex.index);
      const open = ex.is_function ? ' — double-click to open this call' : '';
      const device = ex.device ? `\non ${ex.device}` : '';
      b.title = `#${ex.index} ${ex.op_type}${ex.alert ? ' — non-finite output' : ''}${open}${device}`;
      b.addEventListener('click', () => {
        this.boxes.focus();
        void this.ctl.focusExecution(ex.index);
      });
      if (ex.is_function) b.addEventListener('dblclick', () => void this.ctl.openCall(ex.index));
      return b;
    });
    this.boxes.replaceChildren(...els);
    this.prev.disabled = begin <= 0;
    this.next.disabled = begin + size >= total;
    this.zoomOut.disabled = size >= Math.min(total, 1000) && begin === 0;
    this.zoomIn.disabled = this.pitch >= MAX_PITCH;
    const last = Math.min(begin + list.length, total);
    this.range.textContent = `${begin}–${last > 0 ? last - 1 : 0} of ${total.toLocaleString('en-US')}`;
    this.markFocus();
  }

  private markFocus(): void {
    const s = this.ctl.store.state;
    const f = s.focus;
    // a focused graph trace marks the call that ran it (the focus chain brought the window to it)
    const d = f?.kind === 'graph_execution' ? s.focusDetail.data : null;
    const ran = d && 'call_index' in d && d.index === f?.index ? String(d.call_index) : null;
    for (const b of this.boxes.children) {
      const box = b as HTMLElement;
      box.classList.toggle('selected', f?.kind === 'execution' && String(f.index) === box.dataset.index);
      box.classList.toggle('ran-focus', ran === box.dataset.index);
      box.classList.toggle('opened', String(s.geFilters.call) === box.dataset.index);
    }
  }

  private renderDetail(s: State): void {
    const d = s.focusDetail.data;
    if (s.focus?.kind !== 'execution' || !d || !('input_tensor_ids' in d)) {
      if (s.focus?.kind !== 'execution') this.detail.replaceChildren();
      return;
    }
    const ex = d as ExecutionDetail;
    const head = el('div', 'tl-detail-head', `#${ex.index} ${ex.op_type}`);
    if (ex.is_function) head.append(this.openButton(ex.index));
    const io = el(
      'div',
      'muted',
      `inputs: ${ex.input_tensor_ids.length ? ex.input_tensor_ids.join(', ') : 'none'} · ${ex.tensor_debug_mode}`,
    );
    const outs = el('div', 'tl-outputs');
    ex.outputs.forEach((h, i) => {
      const o = el('span', 'tl-output');
      const values = el('button', 'tv-open-btn', 'values');
      values.dataset.testid = 'tl-output-values';
      values.addEventListener('click', () => this.ctl.tensors.open({ source: 'eager', index: ex.index, output: i }));
      o.append(el('span', 'muted', `out ${i}: `), renderHealth(h), values);
      outs.append(o);
    });
    if (!ex.outputs.length) outs.append(el('span', 'muted', 'no output recorded'));
    this.detail.replaceChildren(head, io, outs);
  }

  private openButton(index: number): HTMLElement {
    const b = el('button', 'tl-open-call', 'open call');
    b.dataset.testid = 'tl-open-call';
    b.title = 'List just this call’s traces in Graph Execution and draw the graph around its first NaN/∞';
    b.addEventListener('click', () => void this.ctl.openCall(index));
    return b;
  }
}

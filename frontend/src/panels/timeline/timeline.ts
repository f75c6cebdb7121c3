/**
 * Python Execution Timeline: one box per eager execution (op or tf.function call), lettered by its name, coloured
 * by kind, alert boxes marked; paging with </> and a minimap strip showing where the alerts are over the whole run.
 * Clicking a box focuses that execution (detail here and in Graph Structure, stack in Stack Trace).
 */
import type { Controller } from '../../store/controller.ts';
import type { State } from '../../store/store.ts';
import type { ExecutionDetail, ExecutionDigest, NoticeCode } from '../../api/wire.ts';
import { Panel, el } from '../../widgets/panel.ts';
import { renderHealth } from '../../widgets/health.ts';
import { emptyReason, noRunState } from '../../widgets/notices.ts';
import type { Readiness } from '../../ready.ts';
import { timelineKeyTarget } from '../../store/focus_math.ts';

const BOX = 22;

/** Display name: a function call's name without TF's `__inference_` prefix and numeric suffix. */
export function shortName(opType: string): string {
  const m = /^__(?:inference|forward|backward)_(.+?)(?:_\d+)?$/.exec(opType);
  return m ? m[1]! : opType;
}

export function letterOf(opType: string): string {
  const s = shortName(opType).replace(/^_+/, '');
  return (s[0] ?? '?').toUpperCase();
}

export class TimelinePanel {
  readonly panel = new Panel('Python Execution Timeline', 'panel-timeline');
  private minimap = el('div', 'tl-minimap');
  private boxes = el('div', 'tl-boxes');
  private range = el('span', 'tl-range');
  private prev = el('button', 'tl-page', '‹');
  private next = el('button', 'tl-page', '›');
  private detail = el('div', 'tl-detail');
  /** The first page of a newly selected run is still to be drawn (readiness). */
  private readyPending = false;

  constructor(
    private readonly ctl: Controller,
    private readonly readiness: Readiness,
  ) {
    this.prev.dataset.testid = 'tl-prev';
    this.next.dataset.testid = 'tl-next';
    this.prev.title = 'Earlier executions';
    this.next.title = 'Later executions';
    this.minimap.dataset.testid = 'tl-minimap';
    this.minimap.title = 'Whole run; red marks are alerts. Click to jump.';
    this.boxes.dataset.testid = 'tl-boxes';
    this.detail.dataset.testid = 'tl-detail';
    this.range.dataset.testid = 'tl-range';
    this.panel.tools.append(this.prev, this.range, this.next);
    this.panel.body.append(this.minimap, this.boxes, this.detail);
    this.prev.addEventListener('click', () => ctl.pageTimeline(-1));
    this.next.addEventListener('click', () => ctl.pageTimeline(1));
    this.minimap.addEventListener('click', (e) => {
      const r = this.minimap.getBoundingClientRect();
      ctl.centreTimelineOn(Math.floor(((e.clientX - r.left) / Math.max(1, r.width)) * this.total()));
    });
    this.boxes.tabIndex = 0;
    this.boxes.addEventListener('keydown', (e) => this.onKey(e));
    new ResizeObserver(() => {
      ctl.resizeTimeline(Math.max(5, Math.floor((this.boxes.clientWidth - 8) / (BOX + 2))));
    }).observe(this.boxes);
    ctl.store.subscribe((s, p) => this.update(s, p));
  }

  /** The run's executions (the server's latest page total when it knows more than the last poll). */
  private total(): number {
    const s = this.ctl.store.state;
    return s.timeline.page.data?.total ?? this.ctl.store.runInfo()?.counts.executions ?? 0;
  }

  /** One Tab stop (the box strip); inside it arrows move by one, PageUp/PageDown by a window, Home/End to the ends. */
  private onKey(e: KeyboardEvent): void {
    const s = this.ctl.store.state;
    const focused = s.focus?.kind === 'execution' ? s.focus.index : null;
    const n = timelineKeyTarget(e.key, focused, s.timeline.begin, s.timeline.size, this.total());
    if (n === null) return;
    e.preventDefault();
    if (n !== focused) void this.ctl.focusExecution(n);
  }

  private update(s: State, prev: State): void {
    if (s.run === null) {
      this.boxes.replaceChildren();
      this.minimap.replaceChildren();
      this.range.textContent = '';
      this.panel.setState(noRunState(s));
      return;
    }
    if (s.run !== prev.run) {
      this.detail.replaceChildren();
      this.readiness.begin('timeline');
      this.readyPending = true;
    }
    const t = s.timeline;
    if (t.page !== prev.timeline.page || s.run !== prev.run) this.renderPage(s);
    else if (t.page.status === 'idle' && s.runs !== prev.runs) this.showEmpty(); // the reason follows the notices
    if (t !== prev.timeline || s.alertMarks !== prev.alertMarks) this.drawMinimap(s);
    if (s.focus !== prev.focus) this.markFocus();
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

  private drawMinimap(s: State): void {
    const total = this.total();
    const marks: HTMLElement[] = [];
    const seen = new Set<number>();
    for (const p of s.alertMarks) {
      const pct = total > 0 ? Math.floor((1000 * p) / total) / 10 : 0;
      if (seen.has(pct)) continue;
      seen.add(pct);
      const m = el('span', 'tl-mark');
      m.style.left = `${pct}%`;
      marks.push(m);
    }
    const { begin, size } = s.timeline;
    const win = el('span', 'tl-window');
    win.style.left = `${total ? (100 * begin) / total : 0}%`;
    win.style.width = `${total ? Math.max(0.5, (100 * Math.min(size, total)) / total) : 100}%`;
    this.minimap.replaceChildren(...marks, win);
  }

  /** The empty timeline's reason: an unreadable or missing execution file first (not "no executions"). */
  private showEmpty(): void {
    const explanations: NoticeCode[] = ['no_executions', 'circular_buffer'];
    const info = this.ctl.store.runInfo();
    this.panel.setState(emptyReason(info, explanations, 'This run has no eager executions.', ['execution']));
  }

  private renderBoxes(begin: number, size: number, list: ExecutionDigest[], total: number): void {
    const els = list.map((ex) => {
      const b = el('button', `tl-box ${ex.is_function ? 'fn' : 'op'}${ex.alert ? ' alert' : ''}`, letterOf(ex.op_type));
      b.dataset.testid = 'tl-box';
      b.tabIndex = -1; // the strip is the one Tab stop; arrows move inside it
      b.dataset.index = String(ex.index);
      b.title = `#${ex.index} ${ex.op_type}${ex.alert ? ' — non-finite output' : ''}${ex.device ? `\non ${ex.device}` : ''}`;
      b.addEventListener('click', () => {
        this.boxes.focus();
        void this.ctl.focusExecution(ex.index);
      });
      return b;
    });
    this.boxes.replaceChildren(...els);
    this.prev.disabled = begin <= 0;
    this.next.disabled = begin + size >= total;
    const last = Math.min(begin + list.length, total);
    this.range.textContent = `${begin}–${last > 0 ? last - 1 : 0} of ${total.toLocaleString('en-US')}`;
    this.markFocus();
  }

  private markFocus(): void {
    const f = this.ctl.store.state.focus;
    for (const b of this.boxes.children) {
      const box = b as HTMLElement;
      box.classList.toggle('selected', f?.kind === 'execution' && String(f.index) === box.dataset.index);
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
}

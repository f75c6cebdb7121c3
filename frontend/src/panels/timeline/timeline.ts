/**
 * Python Execution Timeline: one box per eager execution (op or tf.function call), lettered by its name, coloured
 * by kind, alert boxes marked; paging with </> and a minimap strip showing where the alerts are over the whole run.
 * Clicking a box focuses that execution (detail here and in Graph Structure, stack in Stack Trace).
 */
import type { Controller } from '../../store/controller.ts';
import type { State } from '../../store/store.ts';
import type { ExecutionDetail, ExecutionDigest } from '../../api/wire.ts';
import { PAGE_CAP } from '../../api/client.ts';
import { Panel, el } from '../../widgets/panel.ts';
import { renderHealth } from '../../widgets/health.ts';
import { emptyReason, noRunState } from '../../widgets/notices.ts';
import type { Readiness } from '../../store/ready.ts';

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
  private begin = 0;
  private perPage = 40;
  private total = 0;
  private run: string | null = null;
  private count = -1;
  private alertPositions: number[] = [];
  private seq = 0;
  private readyPending = false;

  constructor(private readonly ctl: Controller, private readonly readiness: Readiness) {
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
    this.prev.addEventListener('click', () => this.page(-1));
    this.next.addEventListener('click', () => this.page(1));
    this.minimap.addEventListener('click', (e) => {
      const r = this.minimap.getBoundingClientRect();
      const at = Math.floor(((e.clientX - r.left) / Math.max(1, r.width)) * this.total);
      this.begin = this.clampBegin(at - Math.floor(this.perPage / 2));
      void this.load();
    });
    this.boxes.tabIndex = 0;
    this.boxes.addEventListener('keydown', (e) => {
      const f = this.ctl.store.state.focus;
      if (f?.kind !== 'execution' || (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight')) return;
      e.preventDefault();
      const n = Math.min(Math.max(f.index + (e.key === 'ArrowRight' ? 1 : -1), 0), this.total - 1);
      void this.ctl.focusExecution(n);
    });
    new ResizeObserver(() => {
      const per = Math.max(5, Math.floor((this.boxes.clientWidth - 8) / (BOX + 2)));
      if (per !== this.perPage) {
        this.perPage = Math.min(per, PAGE_CAP);
        if (this.run !== null) void this.load();
      }
    }).observe(this.boxes);
    ctl.store.subscribe((s, p) => this.update(s, p));
  }

  private clampBegin(b: number): number {
    return Math.max(0, Math.min(b, Math.max(0, this.total - this.perPage)));
  }

  private page(dir: number): void {
    this.begin = this.clampBegin(this.begin + dir * this.perPage);
    void this.load();
  }

  private update(s: State, prev: State): void {
    const info = this.ctl.store.runInfo();
    const count = info?.counts.executions ?? 0;
    const alerts = info?.counts.alerts ?? 0;
    const prevAlerts = prev.runs.data?.runs.find((r) => r.name === prev.run)?.counts.alerts ?? -1;
    if (s.run === null) {
      this.run = null;
      this.boxes.replaceChildren();
      this.minimap.replaceChildren();
      this.range.textContent = '';
      this.panel.setState(noRunState(s));
      return;
    }
    if (s.run !== this.run) {
      this.run = s.run;
      this.begin = 0;
      this.count = count;
      this.total = count;
      this.detail.replaceChildren();
      if (s.run !== null) {
        this.readiness.begin('timeline');
        this.readyPending = true;
        void this.load();
        // The minimap's marks need up to 1000 alerts (~300 KB of JSON at 1 M traces, the slowest first request):
        // drawn just after the first paint instead of holding up the pages every panel needs for it.
        this.readiness.afterReady(() => void this.loadAlerts());
      }
    } else if (count !== this.count) {
      // Live: follow the newest executions if the user was looking at the last page.
      const atEnd = this.begin + this.perPage >= this.total;
      this.count = count;
      this.total = count;
      if (atEnd) this.begin = this.clampBegin(this.total - this.perPage);
      void this.load();
    } else if (this.total === 0 && s.runs !== prev.runs) this.showEmpty(); // the reason follows the notices
    if (s.run !== null && alerts !== prevAlerts && s.run === prev.run) this.readiness.afterReady(() => void this.loadAlerts());
    if (s.focus !== prev.focus && s.focus?.kind === 'execution') {
      const i = s.focus.index;
      if (i < this.begin || i >= this.begin + this.perPage) {
        this.begin = this.clampBegin(i - Math.floor(this.perPage / 2));
        void this.load();
      } else this.markFocus();
    } else if (s.focus !== prev.focus) this.markFocus();
    if (s.focusDetail !== prev.focusDetail) this.renderDetail(s);
  }

  private async loadAlerts(): Promise<void> {
    const run = this.run;
    if (run === null) return;
    try {
      const r = await this.ctl.api.alerts(run, 0, PAGE_CAP);
      if (run !== this.run) return;
      this.alertPositions = r.alerts.filter((a) => a.source === 'execution').map((a) => a.source_index);
    } catch {
      this.alertPositions = [];
    }
    this.drawMinimap();
  }

  private drawMinimap(): void {
    const marks: HTMLElement[] = [];
    const seen = new Set<number>();
    for (const p of this.alertPositions) {
      const pct = this.total > 0 ? Math.floor((1000 * p) / this.total) / 10 : 0;
      if (seen.has(pct)) continue;
      seen.add(pct);
      const m = el('span', 'tl-mark');
      m.style.left = `${pct}%`;
      marks.push(m);
    }
    const win = el('span', 'tl-window');
    win.style.left = `${this.total ? (100 * this.begin) / this.total : 0}%`;
    win.style.width = `${this.total ? Math.max(0.5, (100 * Math.min(this.perPage, this.total)) / this.total) : 100}%`;
    this.minimap.replaceChildren(...marks, win);
  }

  /** The empty timeline's reason: an unreadable or missing execution file first (not "no executions"). */
  private showEmpty(): void {
    this.panel.setState(emptyReason(this.ctl.store.runInfo(), ['no_executions', 'circular_buffer'], 'This run has no eager executions.', ['execution']));
  }

  private async load(): Promise<void> {
    const run = this.run;
    if (run === null) return;
    const seq = ++this.seq;
    if (this.total === 0) {
      this.boxes.replaceChildren();
      this.range.textContent = '';
      this.showEmpty();
      this.drawMinimap();
      return this.finishReady();
    }
    try {
      const r = await this.ctl.api.executions(run, this.begin, this.begin + this.perPage);
      if (seq !== this.seq) return;
      this.total = r.total;
      this.renderBoxes(r.executions);
      this.panel.setState({ kind: 'content' });
    } catch (e) {
      if (seq !== this.seq) return;
      this.panel.setState({ kind: 'error', text: `Could not load executions: ${e instanceof Error ? e.message : String(e)}` });
    }
    this.drawMinimap();
    this.finishReady();
  }

  private finishReady(): void {
    if (!this.readyPending) return;
    this.readyPending = false;
    this.readiness.end('timeline');
  }

  private renderBoxes(list: ExecutionDigest[]): void {
    const els = list.map((ex) => {
      const b = el('button', `tl-box ${ex.is_function ? 'fn' : 'op'}${ex.alert ? ' alert' : ''}`, letterOf(ex.op_type));
      b.dataset.testid = 'tl-box';
      b.dataset.index = String(ex.index);
      b.title = `#${ex.index} ${ex.op_type}${ex.alert ? ' — non-finite output' : ''}`;
      b.addEventListener('click', () => void this.ctl.focusExecution(ex.index));
      return b;
    });
    this.boxes.replaceChildren(...els);
    this.prev.disabled = this.begin <= 0;
    this.next.disabled = this.begin + this.perPage >= this.total;
    const last = Math.min(this.begin + list.length, this.total);
    this.range.textContent = `${this.begin}–${last > 0 ? last - 1 : 0} of ${this.total.toLocaleString('en-US')}`;
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
    const io = el('div', 'muted', `inputs: ${ex.input_tensor_ids.length ? ex.input_tensor_ids.join(', ') : 'none'} · ${ex.tensor_debug_mode}`);
    const outs = el('div', 'tl-outputs');
    ex.outputs.forEach((h, i) => {
      const o = el('span', 'tl-output');
      o.append(el('span', 'muted', `out ${i}: `), renderHealth(h));
      outs.append(o);
    });
    if (!ex.outputs.length) outs.append(el('span', 'muted', 'no output recorded'));
    this.detail.replaceChildren(head, io, outs);
  }
}

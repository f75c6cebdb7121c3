/**
 * Alerts panel: the Root cause card, then alert types with counts; a type expands into its alerts in time order
 * (virtualized, any count); next/previous (buttons and n/p). Clicking an alert focuses its tensor everywhere.
 * Producers (the op made the value non-finite) and propagators (it only passed one on) look different.
 */
import type { Controller } from '../../store/controller.ts';
import type { State } from '../../store/store.ts';
import type { Alert } from '../../api/wire.ts';
import { Panel, el } from '../../widgets/panel.ts';
import { VirtualList } from '../../widgets/virtual_list.ts';
import { healthChips } from '../../widgets/health.ts';
import { emptyReason, noRunState } from '../../widgets/notices.ts';
import type { Readiness } from '../../store/ready.ts';
import { renderRootCause } from './root_cause_card.ts';

const TYPE_LABEL: Record<string, string> = { InfNanAlert: 'NaN / ∞' };

export class AlertsPanel {
  readonly panel = new Panel('Alerts', 'panel-alerts');
  private rc = el('div', 'rc-slot');
  private types = el('div', 'alert-types');
  private list: VirtualList<Alert>;
  private prevBtn = el('button', 'alert-nav', '↑ prev');
  private nextBtn = el('button', 'alert-nav', 'next ↓');
  private run: string | null = null;
  private alertCount = -1;
  private rcSeq = 0;
  private readyPending = false;

  constructor(private readonly ctl: Controller, private readonly readiness: Readiness) {
    this.prevBtn.dataset.testid = 'alert-prev';
    this.nextBtn.dataset.testid = 'alert-next';
    this.prevBtn.title = 'Previous alert (p)';
    this.nextBtn.title = 'Next alert (n)';
    this.prevBtn.addEventListener('click', () => void this.step(-1));
    this.nextBtn.addEventListener('click', () => void this.step(1));
    this.panel.tools.append(this.prevBtn, this.nextBtn);
    this.list = new VirtualList<Alert>({
      rowHeight: 24,
      pageSize: 200,
      testId: 'alert-list',
      fetchPage: (b, e) => this.fetch(b, e),
      renderRow: (row, a) => this.renderRow(row, a),
      rowClass: (_i, a) => (a && a.index === this.ctl.store.state.alertIndex ? 'focused' : null),
      onSelect: (_i, a) => a && void this.ctl.focusAlert(a),
      onActivate: (_i, a) => a && void this.ctl.focusAlert(a),
      onDraw: () => this.afterDraw(),
    });
    this.types.dataset.testid = 'alert-types';
    this.rc.dataset.testid = 'root-cause-slot';
    this.panel.body.append(this.rc, this.types, this.list.element);
    ctl.store.subscribe((s, p) => this.update(s, p));
  }

  private fetch(begin: number, end: number) {
    const run = this.run;
    const type = this.ctl.store.state.alertType;
    if (run === null || type === null) return Promise.resolve({ items: [], total: 0 });
    return this.ctl.api.alerts(run, begin, end, type).then((r) => ({ items: r.alerts, total: r.total }));
  }

  private renderRow(row: HTMLElement, a: Alert | undefined): void {
    row.classList.add('alert-row');
    if (!a) {
      row.replaceChildren(el('span', 'muted', 'Loading…'));
      return;
    }
    row.dataset.testid = 'alert-row';
    row.dataset.role = a.role ?? '';
    const role = el('span', `alert-role role-${a.role ?? 'none'}`, a.role === 'producer' ? '●' : a.role === 'propagator' ? '○' : '·');
    role.title = a.role === 'producer' ? 'Producer: this op made the value non-finite' : a.role === 'propagator' ? 'Propagator: a non-finite input passed through' : 'role not analysed';
    const name = el('span', 'alert-op', a.op_name ?? a.op_type);
    name.title = `${a.op_name ?? '(eager)'} ${a.op_type} · ${a.source} #${a.source_index}`;
    const chips = el('span', 'chips');
    const h = a.neg_inf === null && a.pos_inf === null && a.nan === null
      ? { mode: 'CURT_HEALTH', tensor_id: -1, any_inf_or_nan: true }
      : { mode: 'CONCISE_HEALTH', tensor_id: -1, size: a.size ?? 0, neg_inf: a.neg_inf ?? 0, pos_inf: a.pos_inf ?? 0, nan: a.nan ?? 0 };
    for (const c of healthChips(h)) {
      const s = el('span', `chip chip-${c.kind}`, c.text);
      s.title = c.title;
      chips.append(s);
    }
    row.replaceChildren(el('span', 'alert-idx', String(a.index)), role, name, el('span', 'alert-type muted', a.op_type), chips);
  }

  private afterDraw(): void {
    if (this.readyPending && this.list.model.loadedOnce) {
      this.readyPending = false;
      this.readiness.end('alerts');
    }
  }

  private async step(dir: number): Promise<void> {
    const s = this.ctl.store.state;
    const info = this.ctl.store.runInfo();
    if (s.run === null || !info || info.counts.alerts === 0) return;
    const cur = s.alertIndex;
    const next = cur === null ? (dir > 0 ? 0 : info.counts.alerts - 1) : Math.min(Math.max(cur + dir, 0), info.counts.alerts - 1);
    if (next === cur) return;
    const r = await this.ctl.api.alerts(s.run, next, next + 1);
    const a = r.alerts[0];
    if (a && this.ctl.store.state.run === s.run) await this.ctl.focusAlert(a);
  }

  /** Keyboard n / p from anywhere in the dashboard. */
  nextAlert(dir: number): void {
    void this.step(dir);
  }

  private async loadRootCause(run: string): Promise<void> {
    const seq = ++this.rcSeq;
    // The card is this panel's first data as much as the alert list is: the ready marker waits for it too.
    this.readiness.begin('root-cause');
    try {
      await this.showRootCause(run, seq);
    } finally {
      if (seq === this.rcSeq) this.readiness.end('root-cause');
    }
  }

  private async showRootCause(run: string, seq: number): Promise<void> {
    try {
      const rc = await this.ctl.api.rootCause(run);
      if (seq !== this.rcSeq) return;
      this.panel.element.classList.add('has-rc');
      this.rc.replaceChildren(renderRootCause(rc, () => {
        if (rc.producer) void this.ctl.focusAlert(rc.producer.alert);
      }));
    } catch (e) {
      if (seq !== this.rcSeq) return;
      const err = el('div', 'rc-card rc-error', `Root cause not available: ${e instanceof Error ? e.message : String(e)}`);
      err.dataset.testid = 'root-cause';
      this.rc.replaceChildren(err);
    }
  }

  private renderTypes(s: State): void {
    const info = this.ctl.store.runInfo();
    const byType = info?.counts.alerts_by_type ?? {};
    const rows: HTMLElement[] = [];
    for (const [type, n] of Object.entries(byType)) {
      if (n <= 0) continue;
      const b = el('button', 'alert-type-row' + (s.alertType === type ? ' open' : ''));
      b.dataset.testid = 'alert-type';
      b.dataset.type = type;
      b.append(el('span', '', `${s.alertType === type ? '▾' : '▸'} ${TYPE_LABEL[type] ?? type}`), el('span', 'alert-count', n.toLocaleString('en-US')));
      b.addEventListener('click', () => this.ctl.setAlertType(s.alertType === type ? null : type));
      rows.push(b);
    }
    this.types.replaceChildren(...rows);
    this.list.element.hidden = s.alertType === null;
  }

  private update(s: State, prev: State): void {
    const info = this.ctl.store.runInfo();
    const count = info?.counts.alerts ?? 0;
    const byType = info?.counts.alerts_by_type ?? {};
    if (s.run === null) {
      this.run = null;
      this.rc.replaceChildren();
      this.panel.element.classList.remove('has-rc');
      this.panel.setState(noRunState(s));
      return;
    }
    if (s.run !== this.run) {
      this.run = s.run;
      this.alertCount = count;
      void this.loadRootCause(s.run);
      const first = Object.keys(byType).find((t) => (byType[t] ?? 0) > 0) ?? null;
      // Open the first type so the first alert is one click away.
      if (s.alertType === null && first !== null) {
        this.readiness.begin('alerts');
        this.readyPending = true;
        this.ctl.setAlertType(first);
        return;
      }
    } else if (count !== this.alertCount) {
      this.alertCount = count;
      void this.loadRootCause(s.run);
      if (s.alertType === null) {
        const first = Object.keys(byType).find((t) => (byType[t] ?? 0) > 0) ?? null;
        if (first !== null) return this.ctl.setAlertType(first);
      } else this.list.refresh();
    }
    if (s.alertType !== prev.alertType) {
      this.list.reset();
    }
    this.renderTypes(s);
    if (s.alertIndex !== prev.alertIndex) {
      this.list.draw();
      this.revealFocused(s);
    }
    this.prevBtn.disabled = count === 0;
    this.nextBtn.disabled = count === 0;
    if (count === 0) {
      // "No alerts" cannot be claimed while a file the alerts come from is unreadable: that comes first.
      this.panel.setState(
        emptyReason(info, ['no_tensor_mode', 'circular_buffer', 'still_indexing'], 'No alerts: no tensor held -∞, +∞ or NaN.', ['execution', 'graph_execution_traces']),
      );
      // The empty panel still shows the root-cause card (e.g. "clean") above the message.
    } else this.panel.setState({ kind: 'content' });
  }

  /** Scrolls the alert list to the focused alert when it is in the open type (positions equal indices for one type). */
  private revealFocused(s: State): void {
    if (s.alertIndex === null || s.alertType === null) return;
    const m = this.list.model;
    for (let p = Math.max(0, Math.floor(m.firstRow) - 200); p < Math.min(m.total, m.firstRow + 400); p++) {
      if (m.item(p)?.index === s.alertIndex) {
        m.selected = p;
        this.list.scrollToIndex(p, false);
        return;
      }
    }
    const byType = this.ctl.store.runInfo()?.counts.alerts_by_type ?? {};
    if (Object.keys(byType).length === 1 && s.alertIndex < m.total) {
      m.selected = s.alertIndex;
      this.list.scrollToIndex(s.alertIndex, false);
    }
  }
}

/**
 * Alerts panel: the Root cause card, then alert types with counts; a type expands into its alerts in time order
 * (virtualized, any count); next/previous (buttons and n/p). Clicking an alert focuses its tensor everywhere.
 * Producers (the op made the value non-finite) and propagators (it only passed one on) look different.
 */
import type { Controller } from '../../controller/controller.ts';
import type { State } from '../../store/store.ts';
import type { Alert, NoticeCode, TensorHealth } from '../../api/wire.ts';
import { Panel, el } from '../../widgets/panel.ts';
import { muteIcon } from '../../widgets/icons.ts';
import { VirtualList } from '../../widgets/virtual_list.ts';
import { healthChips } from '../../widgets/health.ts';
import { opCells } from '../../widgets/op_cells.ts';
import { emptyReason, noRunState } from '../../widgets/notices.ts';
import type { Readiness } from '../../ready.ts';
import { renderRootCause } from './root_cause_card.ts';
import { alertTarget } from '../../api/requests.ts';
import { MutesBar } from './mutes_bar.ts';

const TYPE_LABEL: Record<string, string> = {
  InfNanAlert: 'NaN / ∞',
  retracing: 'Repeated function traces',
  shape_change: 'Shape change',
  batch_alternates: 'Batch size alternates',
  dtype_change: 'Dtype change',
  all_zero: 'All-zero tensor',
  dead_relu: 'Dead ReLU',
  value_explosion: 'Values exploding',
  value_vanishing: 'Gradient vanishing',
};
/** What one alert is (the report says the same: analysis/report_text.py ALERT_UNIT). */
export const ALERT_UNIT = 'one per non-finite traced tensor or eager execution';
/** What one rule finding is: an op's output where the rule first held (not one per traced tensor). */
export const FINDING_UNIT = "one per op's output the rule holds for, where it first held";

export class AlertsPanel {
  readonly panel = new Panel('Alerts', 'panel-alerts');
  private rc = el('div', 'rc-slot');
  private types = el('div', 'alert-types');
  private list: VirtualList<Alert>;
  private prevBtn = el('button', 'alert-nav', '↑ prev');
  private nextBtn = el('button', 'alert-nav', 'next ↓');
  private mapBtn = el('button', 'alert-nav', 'Health map');
  private mutes: MutesBar;
  private needs = el('div', 'rule-needs');
  /** The first paint's bookkeeping (readiness): the first page of the opened type, and the root-cause card. */
  private listPending = false;
  private rootCausePending = false;

  constructor(
    private readonly ctl: Controller,
    private readonly readiness: Readiness,
  ) {
    this.prevBtn.dataset.testid = 'alert-prev';
    this.nextBtn.dataset.testid = 'alert-next';
    this.prevBtn.title = 'Previous alert (p)';
    this.nextBtn.title = 'Next alert (n)';
    this.prevBtn.addEventListener('click', () => void ctl.stepAlert(-1));
    this.nextBtn.addEventListener('click', () => void ctl.stepAlert(1));
    this.mapBtn.dataset.testid = 'open-health-map';
    this.mapBtn.title = 'Health over time: every op x step, NaN/∞ first';
    this.mapBtn.addEventListener('click', () => ctl.rules.showHealthMap(!ctl.store.state.healthMapOpen));
    this.panel.tools.append(this.prevBtn, this.nextBtn, this.mapBtn);
    this.mutes = new MutesBar(ctl);
    this.needs.dataset.testid = 'rule-needs';
    this.list = new VirtualList<Alert>({
      rowHeight: 24,
      testId: 'alert-list',
      requestRows: (begin, end) => ctl.loadAlertRows(begin, end),
      renderRow: (row, a) =>
        renderAlertRow(
          row,
          a,
          (alert) => this.mutes.openForm(alert),
          (alert) => ctl.tensors.open(alertTarget(alert)),
          ctl.store.state.alertType === null, // the list mixes types: each finding names its rule
        ),
      rowClass: (_i, a) => (a && a.index === this.ctl.store.state.alertIndex ? 'focused' : null),
      onSelect: (_i, a) => a && void this.ctl.focusAlert(a),
      onActivate: (_i, a) => a && void this.ctl.focusAlert(a),
      onDraw: () => this.afterDraw(),
    });
    this.types.dataset.testid = 'alert-types';
    this.rc.dataset.testid = 'root-cause-slot';
    this.panel.body.append(this.rc, this.mutes.element, this.types, this.list.element, this.needs);
    ctl.store.subscribe((s, p) => this.update(s, p));
  }

  private afterDraw(): void {
    if (this.listPending && this.list.model.loadedOnce) {
      this.listPending = false;
      this.readiness.end('alerts');
    }
  }

  private renderRootCause(s: State): void {
    const rc = s.rootCause;
    if (rc.status === 'loading' && !this.rootCausePending) {
      // The card is this panel's first data as much as the alert list is: the ready marker waits for it too.
      this.rootCausePending = true;
      this.readiness.begin('root-cause');
    }
    if (rc.data) {
      const found = rc.data;
      this.panel.element.classList.add('has-rc');
      this.rc.replaceChildren(
        renderRootCause(
          found,
          () => {
            if (found.producer) void this.ctl.focusRootCause(found.producer);
          },
          () => {
            if (found.producer) this.ctl.tensors.open(alertTarget(found.producer.alert));
          },
          this.ctl.store.runInfo()?.framework,
        ),
      );
    } else if (rc.status === 'error') {
      const err = el('div', 'rc-card rc-error', `Root cause not available: ${rc.error}`);
      err.dataset.testid = 'root-cause';
      this.rc.replaceChildren(err);
    }
    if (rc.status !== 'loading' && this.rootCausePending) {
      this.rootCausePending = false;
      this.readiness.end('root-cause');
    }
  }

  private renderTypes(s: State): void {
    // after the mutes, with the rules' types, once the summary came; the index's NaN/∞ count until then
    const byType = s.alertSummary.data?.totals_by_type ?? this.ctl.store.runInfo()?.counts.alerts_by_type ?? {};
    const rows: HTMLElement[] = [];
    for (const [type, n] of Object.entries(byType)) {
      if (n <= 0) continue;
      const open = s.alertType === type;
      const b = el('button', 'alert-type-row' + (open ? ' open' : ''));
      b.dataset.testid = 'alert-type';
      b.dataset.type = type;
      b.append(
        el('span', '', `${open ? '▾' : '▸'} ${TYPE_LABEL[type] ?? type}`),
        el('span', 'alert-count', n.toLocaleString('en-US')),
      );
      b.title = `${n.toLocaleString('en-US')} alerts: ${type === 'InfNanAlert' ? ALERT_UNIT : FINDING_UNIT}`;
      b.addEventListener('click', () => this.ctl.setAlertType(open ? null : type));
      rows.push(b);
    }
    // The unit, where the count is shown: TensorFlow's own monitor counts one alert per output slot.
    // Each caption only for the kinds listed: a rule finding is not "one per non-finite traced tensor" (#38 item 8)
    const kinds = Object.entries(byType).filter(([, n]) => n > 0);
    if (kinds.some(([type]) => type === 'InfNanAlert'))
      rows.push(el('div', 'alert-unit muted', `1 NaN/∞ alert = ${ALERT_UNIT}`));
    if (kinds.some(([type]) => type !== 'InfNanAlert'))
      rows.push(el('div', 'alert-unit muted', `1 rule finding = ${FINDING_UNIT}`));
    this.types.replaceChildren(...rows);
    // One line, whatever the number of rules the dump cannot judge (the list below keeps its height); the title
    // says each rule's need and the call that would let it be judged.
    const needs = s.alertSummary.data?.needs ?? [];
    const line = el(
      'div',
      'rule-need muted',
      needs.length
        ? 'Not judged: ' + needs.map((n) => `${TYPE_LABEL[n.rule] ?? n.rule} (${n.needs.join(' or ')})`).join(', ')
        : '',
    );
    line.title = needs.map((n) => `${TYPE_LABEL[n.rule] ?? n.rule}: ${n.call}`).join('\n');
    this.needs.replaceChildren(...(needs.length ? [line] : []));
    this.list.element.hidden = s.alertType === null;
  }

  private update(s: State, prev: State): void {
    if (s.run === null) {
      this.rc.replaceChildren();
      this.panel.element.classList.remove('has-rc');
      this.panel.setState(noRunState(s));
      return;
    }
    if (s.run !== prev.run && s.alertType !== null) {
      this.readiness.begin('alerts');
      this.listPending = true;
    }
    if (s.rootCause !== prev.rootCause || s.run !== prev.run) this.renderRootCause(s);
    if (s.alertRows.key !== prev.alertRows.key) this.list.reset(s.alertRows);
    else if (s.alertRows !== prev.alertRows) this.list.setSource(s.alertRows);
    this.renderTypes(s);
    if (s.mutes !== prev.mutes || s.alertSummary !== prev.alertSummary) this.mutes.update(s);
    if (s.alertIndex !== prev.alertIndex) {
      this.list.draw();
      this.revealFocused(s);
    }
    this.renderCount();
  }

  private renderCount(): void {
    const info = this.ctl.store.runInfo();
    const summary = this.ctl.store.state.alertSummary.data;
    // the rules' findings and the muted alerts count too (the index counts NaN/∞ alerts only)
    const count = Math.max(info?.counts.alerts ?? 0, summary ? summary.total + summary.muted.total : 0);
    // Disabled at the ends: nothing before the first alert, nothing after the last.
    const at = this.ctl.store.state.alertIndex;
    this.prevBtn.disabled = count === 0 || at === 0;
    this.nextBtn.disabled = count === 0 || at === count - 1;
    if (count > 0) return this.panel.setState({ kind: 'content' });
    // "No alerts" cannot be claimed while a file the alerts come from is unreadable: that comes first. The empty
    // panel still shows the root-cause card (e.g. "clean") above the message.
    const explanations: NoticeCode[] = ['no_tensor_mode', 'circular_buffer', 'still_indexing'];
    const noAlerts = 'No alerts: no tensor held -∞, +∞ or NaN.';
    this.panel.setState(emptyReason(info, explanations, noAlerts, ['execution', 'graph_execution_traces']));
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

/** One alert row: index, role (producer ●, unknown ◐, propagator ○, contained/expected ◌), op, type, counts (a
 * rule's evidence instead), the values button (not for retracing: no tensor) and the mute button. */
function renderAlertRow(
  row: HTMLElement,
  a: Alert | undefined,
  onMute: (a: Alert) => void,
  openValues: (a: Alert) => void,
  mixedTypes: boolean,
): void {
  row.classList.add('alert-row');
  if (!a) {
    row.replaceChildren(el('span', 'muted', 'Loading…'));
    return;
  }
  row.dataset.testid = 'alert-row';
  row.dataset.role = a.role ?? '';
  const role = el('span', `alert-role role-${a.role ?? 'none'}`, ROLE_MARK[a.role ?? 'none']);
  role.title = ROLE_TITLE[a.role ?? 'none'];
  const cells = opCells(a);
  const name = el('span', 'alert-op' + (cells.eager ? ' muted' : ''), cells.name);
  name.title = `${a.op_name ?? '(eager)'} ${a.op_type} · ${a.source} #${a.source_index}`;
  const chips = el('span', 'chips');
  // a rule's finding says its evidence in the row (where an alert says its op type), whole in the tooltip; an op
  // named after its type shows it once (its name cell spans the type column, see op_cells.ts)
  let detail: HTMLElement | null = cells.type === null ? null : el('span', 'alert-type muted', cells.type);
  name.classList.toggle('alert-op-wide', detail === null && a.evidence === undefined);
  row.classList.toggle('finding', a.evidence !== undefined);
  if (a.evidence !== undefined) {
    if (mixedTypes) chips.append(el('span', 'chip chip-rule', TYPE_LABEL[a.type] ?? a.type));
    detail = el('span', 'alert-evidence', a.evidence);
    detail.dataset.testid = 'alert-evidence';
    row.title = a.evidence;
  } else
    for (const c of healthChips(alertHealth(a))) {
      const chip = el('span', `chip chip-${c.kind}`, c.text);
      chip.title = c.title;
      chips.append(chip);
    }
  if (a.function === undefined) {
    const values = el('button', 'tv-open-btn', 'values');
    values.dataset.testid = 'alert-values';
    values.tabIndex = -1; // the list is one Tab stop (arrows move inside it); these buttons are for the pointer
    values.title = 'Show this tensor in Tensor Values';
    values.addEventListener('click', (e) => {
      e.stopPropagation();
      openValues(a);
    });
    chips.append(values);
  }
  const mute = el('button', 'alert-mute');
  mute.append(muteIcon());
  mute.dataset.testid = 'alert-mute';
  mute.tabIndex = -1;
  mute.title = 'Mute alerts like this one (with a reason)';
  // the row selects on click: the button's own click must not also focus the alert
  mute.addEventListener('mousedown', (e) => e.stopPropagation());
  mute.addEventListener('click', (e) => {
    e.stopPropagation();
    onMute(a);
  });
  row.replaceChildren(
    ...[el('span', 'alert-idx', String(a.index)), role, name, detail, chips, mute].filter((c) => c !== null),
  );
}

const ROLE_MARK = { producer: '●', unknown: '◐', propagator: '○', contained: '◌', expected: '◌', none: '·' };
const ROLE_TITLE = {
  producer: 'Producer: this op made the value non-finite from finite inputs',
  unknown:
    'Unknown: non-finite, but some input was not recorded (a function input, or a record a circular buffer dropped)',
  propagator: 'Propagator: a non-finite input passed through',
  contained: 'Contained: the ops reading it gave finite outputs (e.g. a -inf mask absorbed by a softmax): not a cause',
  expected: 'Expected: non-finite as in earlier steps where it was absorbed (e.g. a -inf mask): not what broke',
  none: 'role not analysed',
};

/** The health the alert's counts stand for: CURT_HEALTH records only "some element is not finite". */
function alertHealth(a: Alert): TensorHealth {
  if (a.neg_inf === null && a.pos_inf === null && a.nan === null)
    return { mode: 'CURT_HEALTH', tensor_id: -1, any_inf_or_nan: true };
  return {
    mode: 'CONCISE_HEALTH',
    tensor_id: -1,
    size: a.size ?? 0,
    neg_inf: a.neg_inf ?? 0,
    pos_inf: a.pos_inf ?? 0,
    nan: a.nan ?? 0,
  };
}

/**
 * The Alerts panel's mutes (#18): the form that mutes an alert row (by op name, op type, rule or graph, with a
 * reason), and the bar of active mutes, each with how many alerts it hides and a one-click un-mute. The server
 * applies the mutes; this only dispatches the controller's intents and renders the store.
 */
import type { Controller } from '../../controller/controller.ts';
import type { State } from '../../store/store.ts';
import type { Alert } from '../../api/wire.ts';
import { describeMute, muteFor, type MuteScope } from '../../store/mutes.ts';
import { el } from '../../widgets/panel.ts';
import { muteIcon } from '../../widgets/icons.ts';

const SCOPES: [MuteScope, string][] = [
  ['op_name', 'this op name'],
  ['op_type', 'this op type'],
  ['rule', 'this rule (alert type)'],
  ['graph_id', 'this graph'],
];

export class MutesBar {
  readonly element = el('div', 'mutes');
  private readonly form = el('div', 'mute-form');
  private readonly chips = el('div', 'mute-chips');

  constructor(private readonly ctl: Controller) {
    this.element.dataset.testid = 'mutes';
    this.form.dataset.testid = 'mute-form';
    this.form.hidden = true;
    this.element.append(this.form, this.chips);
  }

  /** Opens the form for `a`: pick what to mute it by, say why, confirm. */
  openForm(a: Alert): void {
    const scope = el('select', 'mute-scope');
    scope.dataset.testid = 'mute-scope';
    for (const [value, label] of SCOPES) {
      const option = el('option', '', label);
      option.value = value;
      scope.append(option);
    }
    if (!a.op_name) scope.value = 'op_type'; // an eager execution has no op name
    const reason = el('input', 'mute-reason');
    reason.dataset.testid = 'mute-reason';
    reason.placeholder = 'why (e.g. a library constant, by design)';
    const ok = el('button', 'mute-confirm', 'Mute');
    ok.dataset.testid = 'mute-confirm';
    const cancel = el('button', 'mute-cancel', 'Cancel');
    const submit = () => {
      const mute = muteFor(a, scope.value as MuteScope, reason.value.trim());
      this.form.hidden = true;
      if (mute) this.ctl.rules.addMute(mute);
    };
    ok.addEventListener('click', submit);
    reason.addEventListener('keydown', (e) => e.key === 'Enter' && submit());
    cancel.addEventListener('click', () => (this.form.hidden = true));
    const what = el('span', 'mute-what', `Mute ${a.op_name ?? a.op_type} by`);
    this.form.replaceChildren(what, scope, reason, ok, cancel);
    this.form.hidden = false;
    reason.focus();
  }

  update(s: State): void {
    const hidden = s.alertSummary.data?.muted.by_mute ?? [];
    this.chips.replaceChildren(
      ...s.mutes.map((m, i) => {
        const chip = el('span', 'mute-chip');
        chip.dataset.testid = 'mute-chip';
        const n = hidden[i];
        const count = el('span', 'mute-count', n === undefined ? '…' : `hides ${n.toLocaleString('en-US')}`);
        count.dataset.testid = 'mute-count';
        const off = el('button', 'unmute', '×');
        off.dataset.testid = 'unmute';
        off.title = 'Un-mute';
        off.addEventListener('click', () => this.ctl.rules.removeMute(i));
        chip.title = m.reason ? `Reason: ${m.reason}` : 'No reason given';
        const desc = el('span', 'mute-desc', ` ${describeMute(m)}`);
        desc.prepend(muteIcon());
        chip.append(desc, count, el('span', 'muted', m.reason), off);
        return chip;
      }),
    );
  }
}

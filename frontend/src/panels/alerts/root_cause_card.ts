/**
 * The Root cause card at the top of Alerts: the first op that produced a non-finite tensor, its output health,
 * each input's health (or "not traced"), and the user's source line. One click focuses everything on it.
 */
import type { RootCauseResponse } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';
import { renderHealth } from '../../widgets/health.ts';
import { baseName } from '../stack_trace/fold.ts';

export function renderRootCause(rc: RootCauseResponse, onFocus: () => void, onValues: () => void): HTMLElement {
  const card = el('div', `rc-card rc-${rc.status}`);
  card.dataset.testid = 'root-cause';
  card.dataset.status = rc.status;
  const p = rc.producer;
  if (rc.status !== 'found' || !p) {
    card.append(
      el('div', 'rc-title', rc.status === 'clean' ? 'No non-finite values' : 'Root cause unknown'),
      el('div', 'rc-msg', rc.message),
    );
    return card;
  }
  card.tabIndex = 0;
  card.setAttribute('role', 'button');
  card.title = 'Focus every panel on this op';
  const title = el('div', 'rc-title');
  title.append(
    el('span', 'rc-label', 'Root cause: '),
    el('b', 'rc-op', p.op_name ?? p.op_type),
    el('span', 'muted', ` ${p.op_type}`),
  );
  const values = el('button', 'tv-open-btn', 'values');
  values.dataset.testid = 'rc-values';
  values.title = "Show this op's output and inputs in Tensor Values";
  values.addEventListener('click', (e) => {
    e.stopPropagation();
    onValues();
  });
  title.append(values);
  const out = el('div', 'rc-line');
  out.append(el('span', 'muted', 'output '), renderHealth(p.output_health));
  card.append(title, out);
  for (const input of p.inputs) {
    const row = el('div', 'rc-line rc-input');
    row.dataset.testid = 'rc-input';
    row.append(
      el('span', 'muted', `in ${input.slot} `),
      el('span', 'rc-in-name', `${input.op_name}:${input.output_slot} `),
    );
    if (input.traced && input.health) row.append(renderHealth(input.health));
    row.append(el('span', 'muted rc-desc', ` ${input.description}`));
    card.append(row);
  }
  if (p.user_frame) {
    const loc = el('div', 'rc-src');
    loc.dataset.testid = 'rc-source';
    loc.append(el('span', 'rc-file', `${baseName(p.user_frame.path)}:${p.user_frame.line}`));
    if (p.source_line !== null) loc.append(el('code', 'rc-code', p.source_line.trim()));
    loc.title = `${p.user_frame.path ?? ''}:${p.user_frame.line} in ${p.user_frame.function}`;
    card.append(loc);
  }
  if (rc.message) {
    const msg = el('div', 'rc-msg muted', rc.message);
    msg.title = rc.message;
    card.append(msg);
  }
  card.addEventListener('click', onFocus);
  card.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') onFocus();
  });
  return card;
}

/**
 * `?` (#40 item 9): the dashboard's keys, and a link to the README (served by the plugin at `readme`). It is an
 * overlay like the others: Escape closes the topmost one (controller/overlay_stack.ts), `?` or its × close it too.
 */
import type { Controller } from '../../controller/controller.ts';
import { el } from '../../widgets/panel.ts';

const KEYS: [string, string][] = [
  ['?', 'this help (again: close it)'],
  ['Esc', 'close the topmost overlay: this help, Capsules, the compare card (folds it), Tensor Values'],
  ['n / p', 'next / previous alert'],
  ['↑ ↓ Home End PgUp PgDn', 'move in Graph Execution (and in any list or the timeline that has the focus)'],
  ['Enter', 'focus every panel on the selected row or box'],
  ['+ / −', 'zoom the Python Execution Timeline'],
  ['Back (browser) or ← back', 'the previous focus'],
];

export const HELP_CSS = `
.help-overlay { position: fixed; bottom: 16px; right: 16px; z-index: 50; max-width: min(560px, calc(100vw - 32px));
  background: var(--bg); color: var(--fg); border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px;
  box-shadow: 0 4px 16px rgba(0, 0, 0, 0.3); }
.help-overlay[hidden] { display: none; }
.help-overlay table { border-collapse: collapse; margin: 4px 0 8px; }
.help-overlay th { text-align: left; padding: 2px 12px 2px 0; white-space: nowrap; font-family: Menlo, Consolas, monospace; }
.help-overlay td { padding: 2px 0; }
.help-overlay a { color: var(--link); }
.help-close { float: right; }
`;

export class HelpView {
  readonly element = el('div', 'help-overlay');
  /** The header's way to it, for those who do not guess the key. */
  readonly button = el('button', 'help-open', '?');

  constructor(private readonly ctl: Controller) {
    this.element.dataset.testid = 'help';
    this.button.dataset.testid = 'help-open';
    this.button.title = 'Keys and help (?)';
    this.button.addEventListener('click', () => this.toggle());
    this.element.hidden = true;
    this.element.setAttribute('role', 'dialog');
    this.element.setAttribute('aria-label', 'Keys and help');
    const close = el('button', 'help-close', '×');
    close.title = 'Close (Esc or ?)';
    close.addEventListener('click', () => this.show(false));
    const table = el('table');
    for (const [key, what] of KEYS) {
      const row = el('tr');
      row.append(el('th', '', key), el('td', '', what));
      table.append(row);
    }
    const readme = el('a', '', 'README');
    readme.href = 'readme'; // the plugin's own route, beside index.js: no request leaves the server
    readme.target = '_blank';
    readme.rel = 'noopener';
    readme.dataset.testid = 'help-readme';
    const more = el('p', '', 'Every panel, rule, route and command is in the ');
    more.append(readme, ' (panels, compare, capsules, the CLI).');
    this.element.append(close, el('b', '', 'Keys'), table, more);
  }

  toggle(): void {
    this.show(this.element.hidden);
  }

  private show(shown: boolean): void {
    this.element.hidden = !shown;
    if (shown) this.ctl.overlays.opened('help', () => !this.element.hidden && (this.show(false), true));
    else this.ctl.overlays.closed('help');
  }
}

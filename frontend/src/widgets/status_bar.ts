/**
 * The header's status line: the run's counts, then its problems (and the logdir's) as compact severity-coloured
 * entries, a toggle showing how many there are, and a details list under the header with every notice (file, byte
 * offset, full message). A problem must be visible whatever else is on screen, without a wall of text: the line
 * summarizes, the list keeps everything. All text goes through textContent: messages quote dump-provided names.
 */
import { el } from './panel.ts';
import { worstSeverity, type Severity, type StatusItem } from './notices.ts';

/** Lines a tooltip shows before pointing at the list (a tooltip of 100 lines is unreadable). */
const TOOLTIP_LINES = 12;

/** A severity badge drawn by CSS around a plain letter: symbol glyphs (⚠, ⛔) are missing from many fonts. */
function badge(sev: Severity): HTMLElement {
  const b = el('span', `sev-badge sev-${sev}`, sev === 'info' ? 'i' : '!');
  b.setAttribute('aria-label', sev);
  return b;
}

export class StatusBar {
  /** The status line (data-testid=status): summary text then one span per problem entry. */
  readonly line = el('span', 'status');
  /** Opens and closes the details list; hidden when there is nothing to detail. */
  readonly toggle = el('button', 'status-toggle');
  /** Every notice, one row each, under the header. */
  readonly list = el('div', 'notice-list');
  private open = false;
  private shownKey = '';

  constructor() {
    this.line.dataset.testid = 'status';
    this.toggle.dataset.testid = 'status-details-toggle';
    this.toggle.type = 'button';
    this.toggle.hidden = true;
    this.toggle.setAttribute('aria-expanded', 'false');
    this.list.dataset.testid = 'notice-list';
    this.list.setAttribute('role', 'region');
    this.list.setAttribute('aria-label', 'Problems and notes');
    this.list.hidden = true;
    this.toggle.addEventListener('click', () => this.setOpen(!this.open));
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && this.open) this.setOpen(false);
    });
  }

  private setOpen(open: boolean): void {
    this.open = open;
    this.list.hidden = !open;
    this.toggle.setAttribute('aria-expanded', String(open));
    this.toggle.classList.toggle('open', open);
  }

  /**
   * `summary`: the plain parts (run, counts, modes, progress); `items`: the problem entries, most severe first;
   * `extra`: failures of the dashboard itself (e.g. the last poll failed), shown as errors.
   */
  update(summary: string[], items: StatusItem[], extra: string[] = []): void {
    const all: StatusItem[] = [
      ...extra.map((t): StatusItem => ({
        severity: 'error',
        code: 'client',
        text: t,
        details: [t],
        where: '',
        short: t,
      })),
      ...items,
    ];
    // Redraw only on change: the poller updates the store every second.
    const key = JSON.stringify([summary, all]);
    if (key === this.shownKey) return;
    this.shownKey = key;
    const shown = all.filter((i) => i.severity !== 'info');
    const spans = shown.map((i) => {
      const s = el('span', `status-problem sev-${i.severity}`, i.short);
      s.dataset.testid = 'status-problem';
      s.dataset.code = i.code;
      return s;
    });
    const text = summary.filter(Boolean).join(' · ');
    const children: Node[] = [el('span', 'status-summary', text)];
    for (const s of spans) {
      if (children.length > 1 || text) children.push(el('span', 'status-sep', ' · '));
      children.push(s);
    }
    this.line.replaceChildren(...children);
    const worst = worstSeverity(shown);
    this.line.classList.toggle('warn', worst !== null);
    this.line.classList.toggle('sev-error', worst === 'error');
    this.line.classList.toggle('sev-warning', worst === 'warning');
    const details = all.flatMap((i) => i.details);
    this.line.title =
      details.length > TOOLTIP_LINES
        ? [
            ...details.slice(0, TOOLTIP_LINES),
            `… ${details.length - TOOLTIP_LINES} more: open the list (${this.toggleLabel(all)}).`,
          ].join('\n')
        : details.join('\n');
    this.toggle.hidden = all.length === 0;
    const worstAll = worstSeverity(all);
    this.toggle.replaceChildren(
      ...(worstAll ? [badge(worstAll)] : []),
      document.createTextNode(` ${this.toggleLabel(all)} ▾`),
    );
    this.toggle.className = `status-toggle sev-${worstSeverity(all) ?? 'info'}${this.open ? ' open' : ''}`;
    this.toggle.title = 'Show every problem and note, with its file and byte offset';
    this.renderList(all);
    if (all.length === 0) this.setOpen(false);
  }

  /** "3 problems, 1 note": counts of notices (a summarized entry counts each notice behind it). */
  private toggleLabel(all: StatusItem[]): string {
    const problems = all.filter((i) => i.severity !== 'info').reduce((n, i) => n + i.details.length, 0);
    const notes = all.filter((i) => i.severity === 'info').reduce((n, i) => n + i.details.length, 0);
    const parts: string[] = [];
    if (problems) parts.push(`${problems} problem${problems === 1 ? '' : 's'}`);
    if (notes) parts.push(`${notes} note${notes === 1 ? '' : 's'}`);
    return parts.join(', ');
  }

  private renderList(all: StatusItem[]): void {
    const rows: HTMLElement[] = [];
    for (const item of all) {
      const group = el('div', `notice-group sev-${item.severity}`);
      group.dataset.code = item.code;
      const title = el('div', 'notice-title');
      title.append(badge(item.severity), document.createTextNode(' ' + item.text));
      group.append(title);
      // A summarized entry lists each notice behind it (e.g. every damaged record with its byte offset); a single
      // one only adds where it is (its text already says what happened).
      if (item.details.length > 1 || item.code === 'damaged_record') {
        const ul = el('ul', 'notice-details');
        for (const d of item.details) ul.append(el('li', '', d));
        group.append(ul);
      } else if (item.where) group.append(el('div', 'notice-details notice-where', item.where));
      rows.push(group);
    }
    this.list.replaceChildren(...rows);
  }
}

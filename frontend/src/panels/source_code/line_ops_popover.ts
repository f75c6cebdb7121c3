/**
 * The list a Source Code marker opens: the graph ops its line created — health mark, name, type, graph, and whether
 * the line made it directly or through a call — non-finite ones first (the server's order). Clicking an op (or Enter
 * on it) focuses it; "more" fetches the next page; Esc or × closes. Renders `State.lineOps` only; the panel places it
 * beside the line.
 */
import { graphKind, graphLabels } from '../../widgets/graph_names.ts';
import type { Controller } from '../../controller/controller.ts';
import type { LineOpsView } from '../../store/store.ts';
import type { LineOp } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';

/** ● a non-finite output, ○ traced and finite, ◐ health not known (never traced, or only in a mode without counts). */
export function healthMark(op: LineOp): { mark: string; cls: string; words: string } {
  if (op.first_nonfinite !== null)
    return { mark: '●', cls: 'nonfinite', words: `NaN/∞ output (first at trace #${op.first_nonfinite})` };
  if (op.traced) return { mark: '○', cls: 'finite', words: 'traced, all finite' };
  return { mark: '◐', cls: 'untraced', words: 'health unknown: not traced in a mode that counts NaN/∞' };
}

export class LineOpsPopover {
  readonly element = el('div', 'line-ops-pop');
  private head = el('div', 'line-ops-head');
  private list = el('ul', 'line-ops-list');
  private foot = el('div', 'line-ops-foot');
  private shown: LineOpsView | null = null;
  /** Opened and its first rows not drawn yet: they take the keyboard focus when they come. */
  private focusRows = false;

  constructor(
    private readonly ctl: Controller,
    /** Gives the keyboard focus back to where the list was opened from (the line's marker). */
    private readonly returnFocus: (line: number) => void,
  ) {
    this.element.dataset.testid = 'line-ops-popover';
    this.element.setAttribute('role', 'dialog');
    this.element.hidden = true;
    this.element.tabIndex = -1; // holds the focus (and hears Esc) while the first page loads
    this.element.append(this.head, this.list, this.foot);
    this.element.addEventListener('keydown', (e) => this.onKey(e));
  }

  /** Draws `view` (null: hidden). Returns whether it was opened just now (the panel then places it and moves the
   * keyboard focus into it). */
  render(view: LineOpsView | null): boolean {
    const opened = view !== null && (this.shown === null || this.shown.line !== view.line);
    const closed = view === null && this.shown !== null;
    const line = this.shown?.line ?? null;
    this.shown = view;
    this.element.hidden = view === null;
    if (closed && line !== null && this.element.contains(document.activeElement)) this.returnFocus(line);
    if (view === null) return false;
    this.element.setAttribute('aria-label', `Graph ops created at line ${view.line}`);
    this.drawHead(view);
    this.drawRows(view);
    if (opened) {
      this.focusRows = true;
      queueMicrotask(() => this.element.focus());
    }
    if (this.focusRows && view.list.status !== 'loading') {
      this.focusRows = false;
      queueMicrotask(() => this.focusFirst());
    }
    return opened;
  }

  private drawHead(view: LineOpsView): void {
    const data = view.list.data;
    const close = el('button', 'line-ops-close', '×');
    close.title = 'Close (Esc)';
    close.setAttribute('aria-label', 'Close');
    close.addEventListener('click', () => this.ctl.lineOps.close());
    const what = data
      ? `${data.total.toLocaleString('en-US')} op${data.total === 1 ? '' : 's'} (${data.direct} direct)` +
        (data.nonfinite ? ` · ${data.nonfinite} with NaN/∞` : '')
      : '';
    this.head.replaceChildren(el('b', '', `Line ${view.line}`), el('span', 'line-ops-what', what), close);
  }

  private drawRows(view: LineOpsView): void {
    const data = view.list.data;
    const labels = graphLabels(data?.rows ?? []);
    this.list.replaceChildren(...(data?.rows ?? []).map((op) => this.row(op, labels.get(op.graph_id) ?? op.graph_id)));
    const parts: HTMLElement[] = [];
    if (view.list.status === 'loading') parts.push(el('span', 'muted', 'Loading…'));
    if (view.list.status === 'error') parts.push(el('span', 'line-ops-error', `Could not list: ${view.list.error}`));
    if (data && view.list.status === 'ready' && data.total === 0)
      parts.push(el('span', 'muted', 'No graph op was created at this line.'));
    if (data && data.end < data.total && view.list.status !== 'loading') {
      const more = el('button', 'line-ops-more', `More (${data.end} of ${data.total.toLocaleString('en-US')})`);
      more.dataset.testid = 'line-ops-more';
      more.addEventListener('click', () => this.ctl.lineOps.more());
      parts.push(more);
    }
    this.foot.replaceChildren(...parts);
  }

  /** `graph`: the graph's label in this list (numbered where two graphs share a name). */
  private row(op: LineOp, graph: string): HTMLElement {
    const h = healthMark(op);
    const b = el('button', `line-op h-${h.cls}`);
    b.type = 'button';
    b.dataset.testid = 'line-op';
    b.dataset.op = op.op_name;
    b.dataset.health = h.cls;
    b.title = `${op.op_name} (${op.op_type}) in ${graph} (${graphKind(op.graph_name, this.ctl.store.runInfo()?.framework)}, graph ${op.graph_id}) — ${h.words}; ${
      op.direct ? 'made by this line' : 'made through a call this line makes'
    }. Click to focus it.`;
    b.append(
      el('span', `line-op-mark h-${h.cls}`, h.mark),
      el('span', 'line-op-name', op.op_name),
      // the type only where it says more than the name (no "Log Log"), as the Graph Execution list does
      el('span', 'line-op-type', op.op_type),
      el('span', 'line-op-graph', graph),
      el('span', 'line-op-how', op.direct ? 'direct' : 'via call'),
    );
    b.addEventListener('click', () => void this.ctl.lineOps.focusOp(op));
    const li = el('li');
    li.append(b);
    return li;
  }

  private buttons(): HTMLButtonElement[] {
    return [...this.list.querySelectorAll<HTMLButtonElement>('button.line-op')];
  }

  private focusFirst(): void {
    // only when the keyboard focus is still the list's (the user may have clicked elsewhere meanwhile)
    if (this.element.hidden || !this.element.contains(document.activeElement)) return;
    (this.buttons()[0] ?? this.head.querySelector<HTMLButtonElement>('button'))?.focus();
  }

  private onKey(e: KeyboardEvent): void {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      this.ctl.lineOps.close();
      return;
    }
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    const all = this.buttons();
    const at = all.indexOf(document.activeElement as HTMLButtonElement);
    const next = all[Math.min(Math.max(at + (e.key === 'ArrowDown' ? 1 : -1), 0), all.length - 1)];
    if (next) {
      e.preventDefault();
      next.focus();
    }
  }
}

/**
 * Stack Trace panel: the focused op's creation stack (or the execution's stack), outermost first as recorded.
 * User frames are emphasized, library runs are folded into an expandable row, the innermost user frame starts
 * selected, and clicking a frame shows it in Source Code.
 */
import type { Controller } from '../../controller/controller.ts';
import type { State } from '../../store/store.ts';
import type { StackFrame } from '../../api/wire.ts';
import { Panel, el } from '../../widgets/panel.ts';
import { noRunState } from '../../widgets/notices.ts';
import { baseName, foldStack } from './fold.ts';

export class StackTracePanel {
  readonly panel = new Panel('Stack Trace', 'panel-stack-trace');
  private list = el('ol', 'stack-list');
  private expanded = new Set<string>();
  /** Folds the user folded again, even one holding the selected frame. */
  private refolded = new Set<string>();
  private shownFrames: StackFrame[] | null = null;

  constructor(private readonly ctl: Controller) {
    this.panel.body.append(this.list);
    this.list.setAttribute('role', 'listbox');
    this.list.tabIndex = 0;
    this.list.addEventListener('keydown', (e) => this.onKey(e));
    ctl.store.subscribe((s, prev) => {
      if (
        s.frames !== prev.frames ||
        s.selectedFrameId !== prev.selectedFrameId ||
        s.run !== prev.run ||
        (s.run === null && s.runs !== prev.runs)
      )
        this.render(s);
    });
    this.render(ctl.store.state);
  }

  private onKey(e: KeyboardEvent): void {
    const frames = this.ctl.store.state.frames.data;
    if (!frames?.length || (e.key !== 'ArrowUp' && e.key !== 'ArrowDown')) return;
    e.preventDefault();
    const cur = frames.findIndex((f) => f.id === this.ctl.store.state.selectedFrameId);
    const next = Math.min(
      Math.max((cur < 0 ? frames.length : cur) + (e.key === 'ArrowDown' ? 1 : -1), 0),
      frames.length - 1,
    );
    this.ctl.selectFrame(frames[next]!);
  }

  private render(s: State): void {
    const f = s.frames;
    if (s.run === null) return this.panel.setState(noRunState(s));
    if (f.status === 'idle') {
      this.list.replaceChildren();
      return this.panel.setState({
        kind: 'empty',
        text: 'Click an alert, a trace or a timeline box to see where its op was created.',
      });
    }
    if (f.status === 'loading') return this.panel.setState({ kind: 'loading' });
    if (f.status === 'error')
      return this.panel.setState({ kind: 'error', text: `Could not load the stack: ${f.error}` });
    const frames = f.data ?? [];
    if (!frames.length) {
      this.list.replaceChildren();
      return this.panel.setState({ kind: 'empty', text: 'TensorFlow recorded no stack for this op.' });
    }
    if (frames !== this.shownFrames) {
      this.expanded.clear();
      this.refolded.clear();
      this.shownFrames = frames;
    }
    this.panel.setState({ kind: 'content' });
    const items = foldStack(frames);
    const rows: HTMLElement[] = [];
    let selectedRow: HTMLElement | null = null;
    for (const item of items) {
      if (
        item.kind === 'fold' &&
        (this.refolded.has(item.key) ||
          (!this.expanded.has(item.key) && !item.frames.some((fr) => fr.id === s.selectedFrameId)))
      ) {
        const row = el('li', 'stack-fold', `▸ ${item.frames.length} library frames`);
        row.dataset.testid = 'stack-fold';
        row.title = item.frames.map((fr) => `${baseName(fr.path)}:${fr.line} ${fr.function}`).join('\n');
        row.addEventListener('click', () => {
          this.expanded.add(item.key);
          this.refolded.delete(item.key);
          this.render(this.ctl.store.state);
        });
        rows.push(row);
        continue;
      }
      if (item.kind === 'fold') {
        // An unfolded run of library frames can be folded again.
        const row = el('li', 'stack-fold', `▾ fold ${item.frames.length} library frames`);
        row.dataset.testid = 'stack-refold';
        row.addEventListener('click', () => {
          this.expanded.delete(item.key);
          this.refolded.add(item.key);
          this.render(this.ctl.store.state);
        });
        rows.push(row);
      }
      const frames =
        item.kind === 'fold'
          ? item.frames.map((fr, k) => ({ frame: fr, index: item.first + k }))
          : [{ frame: item.frame, index: item.index }];
      for (const { frame } of frames) {
        const row = el(
          'li',
          'stack-frame' + (frame.is_user ? ' user' : ' library') + (frame.id === s.selectedFrameId ? ' selected' : ''),
        );
        row.dataset.testid = 'stack-frame';
        row.setAttribute('role', 'option');
        const file = el('span', 'frame-file', `${baseName(frame.path)}:${frame.line}`);
        const fn = el('span', 'frame-func', frame.function);
        row.title = `${frame.path ?? '(source file not yet read)'}:${frame.line} in ${frame.function}`;
        row.append(file, fn);
        row.addEventListener('click', () => this.ctl.selectFrame(frame));
        if (frame.id === s.selectedFrameId) selectedRow = row;
        rows.push(row);
      }
    }
    this.list.replaceChildren(...rows);
    selectedRow?.scrollIntoView({ block: 'nearest' });
  }
}

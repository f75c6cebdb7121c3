/**
 * Source Code panel: the file of the selected stack frame in CodeMirror 6 (read-only, Python), the frame's line
 * highlighted and centred, lines that created ops marked, and a picker to switch between the run's files
 * (user files first). Each line that created graph ops has a marker in the gutter (their count, red when one has a
 * non-finite output); it opens the list of those ops (line_ops_popover.ts), where clicking one focuses it.
 */
import type { Controller } from '../../controller/controller.ts';
import type { State } from '../../store/store.ts';
import type { SourceFileResponse } from '../../api/wire.ts';
import { errorText } from '../../store/store.ts';
import { Panel, el } from '../../widgets/panel.ts';
import { noRunState } from '../../widgets/notices.ts';
import type { Readiness } from '../../ready.ts';
import type { SourceEditor } from './editor.ts';
import { shortPaths } from '../../widgets/paths.ts';
import { LineOpsPopover } from './line_ops_popover.ts';

export class SourceCodePanel {
  readonly panel = new Panel('Source Code', 'panel-source-code');
  private picker = el('select', 'source-picker');
  private pathEl = el('span', 'source-path');
  private host = el('div', 'source-editor');
  /** Loaded and made on the first file shown: the dashboard's first paint shows no file, and CodeMirror is ~85 %
   * of the code, so it is a separate chunk (webpack.config.js) whose download, parsing and view creation stay out
   * of that paint's critical path. */
  private editor: SourceEditor | null = null;
  private editorLoad: Promise<SourceEditor> | null = null;
  private moduleLoad: Promise<typeof import('./editor.ts')> | null = null;
  private dark = false;
  /** The file response whose text the editor holds (a new line in it only moves the highlight). */
  private shownFile: SourceFileResponse | null = null;
  /** Bumped per draw: a draw still waiting for the editor's chunk when a newer one starts is dropped. */
  private drawSeq = 0;
  /** A file load is in flight or not drawn yet (readiness). */
  private drawPending = false;
  private popover: LineOpsPopover;

  constructor(
    private readonly ctl: Controller,
    private readonly readiness: Readiness,
  ) {
    this.picker.dataset.testid = 'source-picker';
    this.picker.title = 'Files of this run';
    this.picker.addEventListener('change', () => {
      const idx = Number(this.picker.value);
      if (Number.isInteger(idx) && idx >= 0) ctl.selectSourceFile(idx);
    });
    this.panel.tools.append(this.picker);
    this.host.dataset.testid = 'source-editor';
    this.pathEl.dataset.testid = 'source-path';
    this.popover = new LineOpsPopover(ctl, (line) => this.editor?.markerOf(line)?.focus());
    this.panel.body.append(this.pathEl, this.host, this.popover.element);
    ctl.store.subscribe((s, prev) => this.update(s, prev));
    this.update(ctl.store.state, null);
    // Fetched and parsed once the dashboard is on screen, so the first click on an alert does not wait for it.
    readiness.afterReady(() => void this.editorModule().catch(() => undefined));
  }

  setDark(dark: boolean): void {
    this.dark = dark;
    this.editor?.setDark(dark);
  }

  private view(): Promise<SourceEditor> {
    this.editorLoad ??= this.editorModule().then((m) => {
      const editor = (this.editor = new m.SourceEditor(this.host, this.dark));
      // the open list follows its line as the file scrolls
      editor.view.scrollDOM.addEventListener('scroll', () => {
        const open = this.ctl.store.state.lineOps;
        if (open) this.place(open.line);
      });
      return editor;
    });
    return this.editorLoad;
  }

  private editorModule(): Promise<typeof import('./editor.ts')> {
    this.moduleLoad ??= import(/* webpackChunkName: "source-editor" */ './editor.ts').catch((e: unknown) => {
      // A failed chunk download is retried with the next file shown.
      this.moduleLoad = null;
      this.editorLoad = null;
      throw e;
    });
    return this.moduleLoad;
  }

  private update(s: State, prev: State | null): void {
    if (!prev || s.sourceFiles !== prev.sourceFiles) this.fillPicker(s);
    const noRunChange = s.run === null && s.runs !== prev?.runs;
    if (!prev || s.source !== prev.source || s.sourceFile !== prev.sourceFile || s.run !== prev.run || noRunChange) {
      void this.show(s);
    } else if (s.sourceLineCounts !== prev.sourceLineCounts) this.drawCounts(s);
    if (!prev || s.lineOps !== prev.lineOps) this.drawLineOps(s);
  }

  /** The markers of the file shown, once both its text and its counts are here. */
  private drawCounts(s: State): void {
    const counts = s.sourceLineCounts.data;
    const file = this.shownFile;
    if (!this.editor || !file) return;
    const fits = counts !== null && counts.run === file.run && counts.index === file.index;
    this.editor.setOpCounts(fits ? counts.lines : [], (line) => this.ctl.lineOps.toggle(line));
  }

  private drawLineOps(s: State): void {
    const view = s.lineOps;
    this.popover.render(view);
    if (view) this.place(view.line);
  }

  /** Puts the list just below its line (above it when there is more room there), right of the gutters, within the
   * panel: the line itself stays in view. */
  private place(line: number): void {
    const box = this.editor?.lineBox(line);
    const body = this.panel.body.getBoundingClientRect();
    const pop = this.popover.element;
    const below = box ? box.bottom - body.top : 0;
    const above = box ? box.top - body.top : 0;
    const fitsBelow = below + pop.offsetHeight <= body.height || body.height - below >= above;
    const top = fitsBelow ? below : above - pop.offsetHeight;
    pop.style.top = `${Math.max(0, Math.min(top, body.height - pop.offsetHeight))}px`;
    pop.style.left = `${box ? Math.max(0, box.left - body.left) : 0}px`;
  }

  private fillPicker(s: State): void {
    const files = s.sourceFiles.data;
    if (!files) return; // not fetched yet, or failed: the picker stays as it was
    const first = el('option', '', files.length ? 'Choose a file…' : 'No source files');
    first.value = '';
    // Grouped "your code" / "libraries", with short paths (the full path in each option's title).
    const short = shortPaths(
      files.map((f) => f.path),
      files.map((f) => f.is_user),
    );
    const groups = { user: el('optgroup'), lib: el('optgroup') };
    groups.user.label = 'your code';
    groups.lib.label = 'libraries';
    files.forEach((f, i) => {
      const o = el('option', '', short[i]);
      o.value = String(f.index);
      o.title = f.path;
      (f.is_user ? groups.user : groups.lib).append(o);
    });
    this.picker.replaceChildren(first, ...[groups.user, groups.lib].filter((g) => g.childElementCount > 0));
    this.picker.value = s.source ? String(s.source.fileIndex) : '';
  }

  private async show(s: State): Promise<void> {
    const seq = ++this.drawSeq;
    if (s.run === null) return this.panel.setState(noRunState(s));
    const src = s.source;
    if (!src) {
      this.shownFile = null;
      return this.panel.setState({
        kind: 'empty',
        text: 'Select an alert, a trace or a stack frame to see its source line.',
      });
    }
    this.picker.value = String(src.fileIndex);
    const file = s.sourceFile;
    if (file.status === 'loading') {
      this.beginDraw();
      return this.panel.setState({ kind: 'loading' });
    }
    if (file.status === 'error' || !file.data) {
      this.panel.setState({ kind: 'error', text: `Could not load the source file: ${file.error}` });
      return this.endDraw();
    }
    let editor: SourceEditor;
    try {
      editor = await this.view();
    } catch (e) {
      if (seq === this.drawSeq)
        this.panel.setState({ kind: 'error', text: `Could not load the source file: ${errorText(e)}` });
      return this.endDraw();
    }
    if (seq !== this.drawSeq) return;
    this.drawFile(editor, file.data, src.line);
    this.endDraw();
  }

  private drawFile(editor: SourceEditor, file: SourceFileResponse, line: number | null): void {
    if (file !== this.shownFile) {
      this.shownFile = file;
      this.pathEl.textContent = file.path;
      this.pathEl.title = `${file.host}:${file.path}`;
      editor.setDoc(file.lines, file.op_lines);
      this.drawCounts(this.ctl.store.state);
    }
    if (!file.lines.length) {
      const text = `${file.path}: TensorFlow recorded no text for this file (not plain Python source).`;
      return this.panel.setState({ kind: 'empty', text });
    }
    this.panel.setState({ kind: 'content' });
    editor.focusLine(line);
  }

  private beginDraw(): void {
    if (this.drawPending) return;
    this.drawPending = true;
    this.readiness.begin('source');
  }

  private endDraw(): void {
    if (!this.drawPending) return;
    this.drawPending = false;
    this.readiness.end('source');
  }
}

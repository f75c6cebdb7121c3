/**
 * Source Code panel: the file of the selected stack frame in CodeMirror 6 (read-only, Python), the frame's line
 * highlighted and centred, lines that created ops marked, and a picker to switch between the run's files
 * (user files first).
 */
import type { Controller } from '../../store/controller.ts';
import type { State } from '../../store/store.ts';
import type { SourceFileRef, SourceFileResponse } from '../../api/wire.ts';
import { Panel, el } from '../../widgets/panel.ts';
import { noRunState } from '../../widgets/notices.ts';
import type { Readiness } from '../../store/ready.ts';
import type { SourceEditor } from './editor.ts';

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
  private files: SourceFileRef[] = [];
  private filesRun: string | null = null;
  private filesCount = -1;
  private shown: { run: string; index: number } | null = null;
  private loadSeq = 0;

  constructor(private readonly ctl: Controller, private readonly readiness: Readiness) {
    this.picker.dataset.testid = 'source-picker';
    this.picker.title = 'Files of this run';
    this.picker.addEventListener('change', () => {
      const idx = Number(this.picker.value);
      if (Number.isInteger(idx) && idx >= 0) ctl.selectSourceFile(idx);
    });
    this.panel.tools.append(this.picker);
    this.host.dataset.testid = 'source-editor';
    this.pathEl.dataset.testid = 'source-path';
    this.panel.body.append(this.pathEl, this.host);
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
    this.editorLoad ??= this.editorModule().then((m) => (this.editor = new m.SourceEditor(this.host, this.dark)));
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
    const info = this.ctl.store.runInfo();
    const count = info?.counts.source_files ?? 0;
    if (s.run !== null && (s.run !== this.filesRun || count !== this.filesCount)) {
      this.filesRun = s.run;
      this.filesCount = count;
      const run = s.run;
      // The picker's list is not part of the first paint (the panel starts with no file): asked for after it, so
      // the pages the first paint needs have the server to themselves.
      this.readiness.afterReady(() => void this.loadFiles(run));
    }
    if (!prev || s.source !== prev.source || s.run !== prev.run || (s.run === null && s.runs !== prev.runs)) void this.show(s);
  }

  private async loadFiles(run: string): Promise<void> {
    try {
      const resp = await this.ctl.api.sourceFiles(run);
      if (run !== this.ctl.store.state.run) return;
      // User code first (what people look for), then everything else by path.
      this.files = [...resp.files].sort((a, b) => Number(b.is_user) - Number(a.is_user) || a.path.localeCompare(b.path));
      this.fillPicker();
    } catch {
      // The picker stays as it was; the editor area reports errors of the file it tries to show.
    }
  }

  private fillPicker(): void {
    const current = this.ctl.store.state.source?.fileIndex;
    const opts = [el('option', '', this.files.length ? 'Choose a file…' : 'No source files')];
    opts[0]!.value = '';
    for (const f of this.files) {
      const o = el('option', '', (f.is_user ? '' : '· ') + f.path);
      o.value = String(f.index);
      opts.push(o);
    }
    this.picker.replaceChildren(...opts);
    this.picker.value = current !== undefined ? String(current) : '';
  }

  private async show(s: State): Promise<void> {
    if (s.run === null) return this.panel.setState(noRunState(s));
    const src = s.source;
    if (!src) {
      this.shown = null;
      return this.panel.setState({ kind: 'empty', text: 'Select an alert, a trace or a stack frame to see its source line.' });
    }
    this.picker.value = String(src.fileIndex);
    const seq = ++this.loadSeq;
    if (this.shown && this.shown.run === s.run && this.shown.index === src.fileIndex) {
      this.editor?.focusLine(src.line);
      this.panel.setState({ kind: 'content' });
      return;
    }
    this.panel.setState({ kind: 'loading' });
    this.readiness.begin('source');
    let file: SourceFileResponse;
    let editor: SourceEditor;
    try {
      [file, editor] = await Promise.all([this.ctl.api.sourceFile(s.run, src.fileIndex), this.view()]);
    } catch (e) {
      if (seq === this.loadSeq) this.panel.setState({ kind: 'error', text: `Could not load the source file: ${e instanceof Error ? e.message : String(e)}` });
      this.readiness.end('source');
      return;
    }
    if (seq !== this.loadSeq) return this.readiness.end('source');
    this.shown = { run: s.run, index: src.fileIndex };
    this.pathEl.textContent = file.path;
    this.pathEl.title = `${file.host}:${file.path}`;
    if (!file.lines.length) {
      editor.setDoc([], []);
      this.panel.setState({ kind: 'empty', text: `${file.path}: TensorFlow recorded no text for this file (not plain Python source).` });
    } else {
      this.panel.setState({ kind: 'content' });
      editor.setDoc(file.lines, file.op_lines);
      editor.focusLine(this.ctl.store.state.source?.fileIndex === src.fileIndex ? (this.ctl.store.state.source?.line ?? null) : src.line);
    }
    this.readiness.end('source');
  }
}

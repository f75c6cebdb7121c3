/**
 * Entry point: TensorBoard imports this module inside the plugin's iframe and calls render().
 * Builds the six-panel layout, wires panels to the one store/controller, follows the theme, and sets
 * `document.body.dataset.ready = "1"` once the first data has rendered.
 */
import { HttpApi, type Api } from './api/client.ts';
import { Store } from './store/store.ts';
import { Controller } from './store/controller.ts';
import { Readiness } from './store/ready.ts';
import { buildLayout } from './layout.ts';
import { CSS } from './styles.ts';
import { watchTheme } from './theme.ts';
import { el } from './widgets/panel.ts';
import { bySeverity, hasProblems, progressText, summarizeNotices } from './widgets/notices.ts';
import { StatusBar } from './widgets/status_bar.ts';
import type { RunInfo } from './api/wire.ts';
import { AlertsPanel } from './panels/alerts/alerts.ts';
import { TimelinePanel } from './panels/timeline/timeline.ts';
import { GraphStructurePanel } from './panels/graph_structure/graph_structure.ts';
import { GraphExecutionPanel } from './panels/graph_execution/graph_execution.ts';
import { SourceCodePanel } from './panels/source_code/source_code.ts';
import { StackTracePanel } from './panels/stack_trace/stack_trace.ts';
import type { State } from './store/store.ts';

function buildHeader(header: HTMLElement, ctl: Controller, readiness: Readiness): void {
  const picker = el('select', 'run-picker');
  picker.dataset.testid = 'run-picker';
  const pickerLabel = el('label', 'run-label');
  pickerLabel.append(document.createTextNode('Run '), picker);
  const bar = new StatusBar();
  // Indexing progress (bytes read of bytes on disk); hidden once the run is fully read.
  const progress = el('progress', 'index-progress');
  progress.dataset.testid = 'index-progress';
  progress.max = 1;
  progress.hidden = true;
  header.append(el('b', '', 'Debugger'), pickerLabel, progress, bar.line, bar.toggle, bar.list);
  picker.addEventListener('change', () => {
    if (picker.value !== ctl.store.state.run) ctl.selectRun(picker.value);
  });
  let shownNames = '';
  const update = (s: State) => {
    const runs = s.runs.data?.runs ?? [];
    // A run with an error is marked in the picker, so a problem in a run not on screen is not missed.
    const label = (r: RunInfo) => (hasProblems(r) ? `${r.name} (errors)` : r.name);
    const names = runs.map(label).join('\n');
    if (names !== shownNames) {
      shownNames = names;
      picker.replaceChildren(...runs.map((r) => Object.assign(el('option', '', label(r)), { value: r.name, title: hasProblems(r) ? 'This run has errors: select it to see them' : '' })));
    }
    if (s.run !== null) picker.value = s.run;
    // A picker only matters when there is a choice.
    pickerLabel.hidden = runs.length < 2;
    const info = ctl.store.runInfo();
    if (!info) progress.hidden = true;
    const parts: string[] = [];
    const failures: string[] = [];
    if (s.runs.status === 'error') failures.push(`Cannot load runs: ${s.runs.error}`);
    else if (s.runs.data && runs.length === 0) {
      const why = s.runs.data.notices.filter((n) => n.code === 'no_dump_found').map((n) => n.message).join(' ');
      parts.push(why || `No tfdbg2 dump found under ${s.runs.data.logdir}.`);
    }
    if (s.runs.error && s.runs.data) failures.push(`Last refresh of the run list failed: ${s.runs.error} (retrying)`);
    if (info) {
      if (runs.length === 1) parts.push(info.name);
      const c = info.counts;
      parts.push(`${c.executions.toLocaleString('en-US')} executions · ${c.graph_executions.toLocaleString('en-US')} graph traces · ${c.alerts.toLocaleString('en-US')} alerts`);
      if (info.debug_modes.length) parts.push(info.debug_modes.join('/'));
      const prog = progressText(info);
      if (prog) parts.push(prog);
      progress.hidden = !prog;
      progress.value = info.status.bytes_total > 0 ? info.status.bytes_read / info.status.bytes_total : 0;
    }
    // The logdir's own problems (a folder that cannot be listed, a failed scan) show whether or not runs exist.
    const logdirNotices = (s.runs.data?.notices ?? []).filter((n) => n.code !== 'no_dump_found');
    const items = [...summarizeNotices(logdirNotices, 'logdir'), ...summarizeNotices(info?.status.notices ?? [])];
    bar.update(parts, bySeverity(items), failures);
    if (s.runs.status === 'ready' || s.runs.status === 'error') readiness.runsRendered();
  };
  ctl.store.subscribe(update);
}

export interface RenderOptions {
  api?: Api;
}

/** Draws the dashboard into the iframe's body. */
export function render(opts: RenderOptions = {}): void {
  // Marks for bench/paint_profile.py (the performance timeline of the iframe); they cost nothing.
  performance.mark('dbg:render');
  const api = opts.api ?? new HttpApi();
  // Ask for `runs` before building the DOM: every other first request waits for its answer, and building the
  // layout and its first style/layout pass would otherwise delay the request by tens of ms. The client shares
  // this in-flight request with the controller's first `runs()` call (same URL).
  void api.runs().catch(() => undefined);
  const style = document.createElement('style');
  style.textContent = CSS;
  document.head.appendChild(style);
  const slots = buildLayout();
  document.body.appendChild(slots.root);
  delete document.body.dataset.ready;

  const store = new Store();
  const ctl = new Controller(store, api);
  const readiness = new Readiness(() => {
    document.body.dataset.ready = '1';
    performance.mark('dbg:ready');
  });
  buildHeader(slots.header, ctl, readiness);
  const alerts = new AlertsPanel(ctl, readiness);
  const timeline = new TimelinePanel(ctl, readiness);
  const structure = new GraphStructurePanel(ctl);
  const execution = new GraphExecutionPanel(ctl, readiness);
  const source = new SourceCodePanel(ctl, readiness);
  const stack = new StackTracePanel(ctl);
  slots.alerts.append(alerts.panel.element);
  slots.timeline.append(timeline.panel.element);
  slots.structure.append(structure.panel.element);
  slots.execution.append(execution.panel.element);
  slots.source.append(source.panel.element);
  slots.stack.append(stack.panel.element);

  watchTheme((dark) => {
    document.body.classList.toggle('dbg-dark', dark);
    source.setDark(dark);
  });

  document.addEventListener('keydown', (e) => {
    const t = e.target as HTMLElement | null;
    if (t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA' || t.isContentEditable)) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === 'n') alerts.nextAlert(1);
    else if (e.key === 'p') alerts.nextAlert(-1);
  });
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) ctl.pollSoon();
  });
  void ctl.start();
  performance.mark('dbg:rendered');
}

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
import { progressText } from './widgets/notices.ts';
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
  const status = el('span', 'status');
  status.dataset.testid = 'status';
  // Indexing progress (bytes read of bytes on disk); hidden once the run is fully read.
  const progress = el('progress', 'index-progress');
  progress.dataset.testid = 'index-progress';
  progress.max = 1;
  progress.hidden = true;
  header.append(el('b', '', 'Debugger'), pickerLabel, progress, status);
  picker.addEventListener('change', () => {
    if (picker.value !== ctl.store.state.run) ctl.selectRun(picker.value);
  });
  let shownNames = '';
  const update = (s: State) => {
    const runs = s.runs.data?.runs ?? [];
    const names = runs.map((r) => r.name).join('\n');
    if (names !== shownNames) {
      shownNames = names;
      picker.replaceChildren(...runs.map((r) => Object.assign(el('option', '', r.name), { value: r.name })));
    }
    if (s.run !== null) picker.value = s.run;
    // A picker only matters when there is a choice.
    pickerLabel.hidden = runs.length < 2;
    const info = ctl.store.runInfo();
    if (!info) progress.hidden = true;
    const parts: string[] = [];
    let warn = false;
    if (s.runs.status === 'error') {
      parts.push(`Cannot load runs: ${s.runs.error}`);
      warn = true;
    } else if (s.runs.data && runs.length === 0) {
      const n = s.runs.data.notices.map((x) => x.message).join(' ');
      parts.push(n || `No tfdbg2 dump found under ${s.runs.data.logdir}.`);
    }
    if (s.runs.error && s.runs.data) {
      parts.push(`(last refresh failed: ${s.runs.error})`);
      warn = true;
    }
    if (info) {
      if (runs.length === 1) parts.push(info.name);
      const c = info.counts;
      parts.push(`${c.executions.toLocaleString('en-US')} executions · ${c.graph_executions.toLocaleString('en-US')} graph traces · ${c.alerts.toLocaleString('en-US')} alerts`);
      if (info.debug_modes.length) parts.push(info.debug_modes.join('/'));
      const prog = progressText(info);
      if (prog) parts.push(prog);
      progress.hidden = !prog;
      progress.value = info.status.bytes_total > 0 ? info.status.bytes_read / info.status.bytes_total : 0;
      const problems = info.status.notices.filter((n) => n.severity !== 'info');
      if (problems.length) {
        parts.push(problems.map((n) => n.message).join(' '));
        warn = true;
      }
    }
    status.textContent = parts.join(' · ');
    status.title = info?.status.notices.map((n) => n.message).join('\n') ?? '';
    status.classList.toggle('warn', warn);
    if (s.runs.status === 'ready' || s.runs.status === 'error') readiness.runsRendered();
  };
  ctl.store.subscribe(update);
}

export interface RenderOptions {
  api?: Api;
}

/** Draws the dashboard into the iframe's body. */
export function render(opts: RenderOptions = {}): void {
  const style = document.createElement('style');
  style.textContent = CSS;
  document.head.appendChild(style);
  const slots = buildLayout();
  document.body.appendChild(slots.root);
  delete document.body.dataset.ready;

  const store = new Store();
  const ctl = new Controller(store, opts.api ?? new HttpApi());
  const readiness = new Readiness(() => {
    document.body.dataset.ready = '1';
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
}

/**
 * Entry point: TensorBoard imports this module inside the plugin's iframe and calls render().
 * Builds the six-panel layout, wires panels to the one store/controller, follows the theme, and sets
 * `document.body.dataset.ready = "1"` once the first data has rendered.
 */
import { HttpApi, type Api } from './api/client.ts';
import { Store } from './store/store.ts';
import { Controller } from './controller/controller.ts';
import { Readiness } from './ready.ts';
import { buildLayout } from './layout.ts';
import { CSS } from './styles.ts';
import { watchTheme } from './theme.ts';
import { buildHeader } from './header.ts';
import { buildCompare } from './panels/compare/compare_view.ts';
import { installKeys } from './keys.ts';
import { HELP_CSS, HelpView } from './panels/help/help_view.ts';
import { AlertsPanel } from './panels/alerts/alerts.ts';
import { TimelinePanel } from './panels/timeline/timeline.ts';
import { GraphStructurePanel } from './panels/graph_structure/graph_structure.ts';
import { GraphExecutionPanel } from './panels/graph_execution/graph_execution.ts';
import { SourceCodePanel } from './panels/source_code/source_code.ts';
import { StackTracePanel } from './panels/stack_trace/stack_trace.ts';
import { HealthMapPanel } from './panels/health_map/health_map.ts';
import { TensorValuesPanel } from './panels/tensor_values/tensor_values.ts';
import { TENSOR_CSS } from './panels/tensor_values/styles.ts';
import { GRAPH_CSS } from './panels/graph_structure/styles.ts';
import { COMPARE_CSS } from './panels/compare/styles.ts';

export interface RenderOptions {
  api?: Api;
}

/** Draws the dashboard into the iframe's body. */
export function render(opts: RenderOptions = {}): void {
  // Marks for bench/paint_profile.py (the performance timeline of the iframe); they cost nothing.
  performance.mark('dbg:render');
  const store = new Store();
  const ctl = new Controller(store, opts.api ?? new HttpApi());
  // Start (its first request is `runs`) before building the DOM: every other first request waits for that answer,
  // and building the layout and its first style/layout pass would otherwise delay the request by tens of ms. The
  // answer comes in a later task, when every panel below is subscribed.
  void ctl.start();
  const style = document.createElement('style');
  style.textContent = CSS + TENSOR_CSS + GRAPH_CSS + COMPARE_CSS + HELP_CSS;
  document.head.appendChild(style);
  const slots = buildLayout();
  document.body.appendChild(slots.root);
  delete document.body.dataset.ready;

  const readiness = new Readiness(() => {
    document.body.dataset.ready = '1';
    performance.mark('dbg:ready');
  });
  buildHeader(slots.header, ctl, readiness);
  buildCompare(slots.header, ctl, slots.alerts);
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
  slots.root.append(new HealthMapPanel(ctl).element);
  slots.root.append(new TensorValuesPanel(ctl).element);

  watchTheme((dark) => {
    document.body.classList.toggle('dbg-dark', dark);
    source.setDark(dark);
  });

  const help = new HelpView(ctl);
  slots.root.append(help.element);
  slots.header.append(help.button);
  installKeys(
    ctl,
    () => execution.list.element,
    () => help.toggle(),
  );
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) ctl.pollSoon();
  });
  readiness.afterReady(() => ctl.firstPaintDone());
  performance.mark('dbg:rendered');
}

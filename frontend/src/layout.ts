/**
 * The Debugger V2 arrangement with resizable splitters:
 *   ┌ header: run picker · status ──────────────────────────────────┐
 *   │ Alerts │ Timeline (upper) / Graph Structure (lower) │ Graph Execution │
 *   ├───────────────────────────────────────────────────────────────┤
 *   │ Source Code                          │ Stack Trace             │
 */
import { makeSplitter } from './widgets/splitter.ts';
import { el } from './widgets/panel.ts';

export interface Slots {
  root: HTMLElement;
  header: HTMLElement;
  alerts: HTMLElement;
  timeline: HTMLElement;
  structure: HTMLElement;
  execution: HTMLElement;
  source: HTMLElement;
  stack: HTMLElement;
}

function pane(cls: string, flex: string): HTMLDivElement {
  const d = el('div', `pane ${cls}`);
  d.style.flex = flex;
  return d;
}

export function buildLayout(): Slots {
  const root = el('div', 'dbg-root');
  root.id = 'dbg-root';
  root.dataset.testid = 'dbg-root';
  const header = el('header', 'dbg-header');
  const main = el('div', 'dbg-main col');
  const top = pane('row', '0 0 58%');
  const bottom = pane('row', '1 1 0');
  const alerts = pane('col', '0 0 24%');
  const center = pane('col', '0 0 38%');
  const execution = pane('col', '1 1 0');
  const timeline = pane('col', '0 0 48%');
  const structure = pane('col', '1 1 0');
  center.append(timeline, makeSplitter('column', timeline, 'split-center'), structure);
  top.append(
    alerts,
    makeSplitter('row', alerts, 'split-left'),
    center,
    makeSplitter('row', center, 'split-right'),
    execution,
  );
  const source = pane('col', '0 0 62%');
  const stack = pane('col', '1 1 0');
  bottom.append(source, makeSplitter('row', source, 'split-bottom'), stack);
  main.append(top, makeSplitter('column', top, 'split-main'), bottom);
  root.append(header, main);
  return { root, header, alerts, timeline, structure, execution, source, stack };
}

/**
 * The header: the run picker (marking runs with errors), indexing progress, and the status line (counts, then the
 * run's and the logdir's problems). Everything comes from the store; picking a run is the controller's intent.
 */
import type { Controller } from './controller/controller.ts';
import type { Readiness } from './ready.ts';
import type { RemoteCost, RunInfo } from './api/wire.ts';
import type { State } from './store/store.ts';
import { el } from './widgets/panel.ts';
import { bySeverity, hasProblems, progressText, summarizeNotices } from './widgets/notices.ts';
import { StatusBar } from './widgets/status_bar.ts';
import { RunsOverview, runLabel } from './panels/runs_overview/runs_overview.ts';
import { CapsulesPanel } from './panels/capsules/capsules_panel.ts';

export function buildHeader(header: HTMLElement, ctl: Controller, readiness: Readiness): void {
  const picker = runPicker(ctl);
  const bar = new StatusBar();
  // Indexing progress (bytes read of bytes on disk); hidden once the run is fully read.
  const progress = el('progress', 'index-progress');
  progress.dataset.testid = 'index-progress';
  progress.max = 1;
  progress.hidden = true;
  // One focus back (the browser's Back does the same: each focus is a history entry).
  const back = el('button', 'focus-back', '← back');
  back.dataset.testid = 'focus-back';
  back.title = 'Back to the previous focus (the browser Back button does the same)';
  back.disabled = true;
  back.addEventListener('click', () => ctl.back());
  const overview = new RunsOverview(ctl);
  const overviewBtn = el('button', 'runs-overview-open', 'Runs…');
  overviewBtn.dataset.testid = 'runs-overview-open';
  overviewBtn.title = 'Every run: hosts, mode, traces, alerts, first NaN/∞, status (sortable)';
  overviewBtn.addEventListener('click', () => overview.toggle());
  const capsules = new CapsulesPanel(ctl);
  header.append(
    el('b', '', 'Debugger'),
    back,
    picker.label,
    overviewBtn,
    capsules.button,
    progress,
    bar.line,
    bar.toggle,
    bar.list,
    overview.element,
    capsules.element,
  );
  ctl.store.subscribe((s: State) => {
    const runs = s.runs.data?.runs ?? [];
    picker.update(s, runs);
    back.disabled = !s.canGoBack;
    overviewBtn.hidden = runs.length < 2; // only when there is a choice
    const info = ctl.store.runInfo();
    const { parts, failures, indexing } = statusText(s, runs, info);
    progress.hidden = !info || !indexing;
    if (info) progress.value = info.status.bytes_total > 0 ? info.status.bytes_read / info.status.bytes_total : 0;
    // The logdir's own problems (a folder that cannot be listed, a failed scan) show whether or not runs exist.
    const logdirNotices = (s.runs.data?.notices ?? []).filter(
      (n) => n.code !== 'no_dump_found' && n.code !== 'scanning' && n.code !== 'capsules',
    );
    const items = [...summarizeNotices(logdirNotices, 'logdir'), ...summarizeNotices(info?.status.notices ?? [])];
    bar.update(parts, bySeverity(items), failures);
    // not ready while a run is being chosen (runs, none shown yet: run_choice.ts waitForChoice)
    const choosing = s.run === null && runs.length > 0;
    if ((s.runs.status === 'ready' && !choosing) || s.runs.status === 'error') readiness.runsRendered();
  });
}

/** The run picker: each run says what it holds (alerts, clean, indexing n %); a run with an error is marked, so a
 * problem in a run not on screen is not missed. Shown only when there is a choice. */
function runPicker(ctl: Controller): { label: HTMLElement; update: (s: State, runs: RunInfo[]) => void } {
  const picker = el('select', 'run-picker');
  picker.dataset.testid = 'run-picker';
  const label = el('label', 'run-label');
  label.append(document.createTextNode('Run '), picker);
  picker.addEventListener('change', () => ctl.chooseRun(picker.value));
  let shownNames = '';
  const update = (s: State, runs: RunInfo[]) => {
    const names = runs.map(runLabel).join('\n');
    if (names !== shownNames) {
      shownNames = names;
      picker.replaceChildren(
        ...runs.map((r) =>
          Object.assign(el('option', '', runLabel(r)), {
            value: r.name,
            title: hasProblems(r) ? 'This run has errors: select it to see them' : '',
          }),
        ),
      );
    }
    if (s.run !== null) picker.value = s.run;
    else picker.selectedIndex = -1; // no run yet (being chosen): the picker names none rather than the first
    label.hidden = runs.length < 2;
  };
  return { label, update };
}

/** The status line's parts (the run's counts, modes, indexing progress, remote cost; or why there is no run), the
 * failures to show, and the indexing progress text ('' once the run is fully read). */
function statusText(
  s: State,
  runs: RunInfo[],
  info: RunInfo | null,
): { parts: string[]; failures: string[]; indexing: string } {
  const parts: string[] = [];
  const failures: string[] = [];
  if (s.runs.status === 'error') failures.push(`Cannot load runs: ${s.runs.error}`);
  else if (s.runs.data && runs.length === 0) {
    const why = s.runs.data.notices
      .filter((n) => n.code === 'no_dump_found' || n.code === 'scanning' || n.code === 'capsules')
      .map((n) => n.message)
      .join(' ');
    parts.push(why || `No tfdbg2 dump found under ${s.runs.data.logdir}.`);
  }
  if (s.runs.error && s.runs.data) failures.push(`Last refresh of the run list failed: ${s.runs.error} (retrying)`);
  let indexing = '';
  if (info) {
    if (runs.length === 1) parts.push(info.name);
    const c = info.counts;
    parts.push(
      `${c.executions.toLocaleString('en-US')} executions · ${c.graph_executions.toLocaleString('en-US')} graph traces · ${c.alerts.toLocaleString('en-US')} alerts (traced tensors / eager executions)`,
    );
    if (info.debug_modes.length) parts.push(info.debug_modes.join('/'));
    indexing = progressText(info);
    if (indexing) parts.push(indexing);
  }
  const cost = s.runs.data?.remote_cost;
  if (cost) parts.push(remoteCostText(cost));
  return { parts, failures, indexing };
}

/** The status line's remote cost: "remote: 12 requests · 40.2 MiB" (listings, ranged reads and size lookups). */
export function remoteCostText(cost: RemoteCost): string {
  const requests = cost.lists + cost.gets + cost.heads;
  return `remote: ${requests.toLocaleString('en-US')} requests · ${(cost.bytes / 2 ** 20).toFixed(1)} MiB`;
}

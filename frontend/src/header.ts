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
import { RunsOverview, runLabel } from './runs_overview.ts';
import { CapsulesPanel } from './capsules_panel.ts';

export function buildHeader(header: HTMLElement, ctl: Controller, readiness: Readiness): void {
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
    pickerLabel,
    overviewBtn,
    capsules.button,
    progress,
    bar.line,
    bar.toggle,
    bar.list,
    overview.element,
    capsules.element,
  );
  picker.addEventListener('change', () => {
    ctl.chooseRun(picker.value);
  });
  let shownNames = '';
  const update = (s: State) => {
    const runs = s.runs.data?.runs ?? [];
    // Each run says what it holds (alerts, clean, indexing n %); a run with an error is marked, so a problem in a
    // run not on screen is not missed.
    const label = (r: RunInfo) => runLabel(r);
    const names = runs.map(label).join('\n');
    if (names !== shownNames) {
      shownNames = names;
      picker.replaceChildren(
        ...runs.map((r) =>
          Object.assign(el('option', '', label(r)), {
            value: r.name,
            title: hasProblems(r) ? 'This run has errors: select it to see them' : '',
          }),
        ),
      );
    }
    if (s.run !== null) picker.value = s.run;
    else picker.selectedIndex = -1; // no run yet (being chosen): the picker names none rather than the first
    back.disabled = !s.canGoBack;
    // A picker only matters when there is a choice.
    pickerLabel.hidden = runs.length < 2;
    overviewBtn.hidden = runs.length < 2;
    const info = ctl.store.runInfo();
    if (!info) progress.hidden = true;
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
    if (info) {
      if (runs.length === 1) parts.push(info.name);
      const c = info.counts;
      parts.push(
        `${c.executions.toLocaleString('en-US')} executions · ${c.graph_executions.toLocaleString('en-US')} graph traces · ${c.alerts.toLocaleString('en-US')} alerts (traced tensors / eager executions)`,
      );
      if (info.debug_modes.length) parts.push(info.debug_modes.join('/'));
      const prog = progressText(info);
      if (prog) parts.push(prog);
      progress.hidden = !prog;
      progress.value = info.status.bytes_total > 0 ? info.status.bytes_read / info.status.bytes_total : 0;
    }
    const cost = s.runs.data?.remote_cost;
    if (cost) parts.push(remoteCostText(cost));
    // The logdir's own problems (a folder that cannot be listed, a failed scan) show whether or not runs exist.
    const logdirNotices = (s.runs.data?.notices ?? []).filter(
      (n) => n.code !== 'no_dump_found' && n.code !== 'scanning' && n.code !== 'capsules',
    );
    const items = [...summarizeNotices(logdirNotices, 'logdir'), ...summarizeNotices(info?.status.notices ?? [])];
    bar.update(parts, bySeverity(items), failures);
    // not ready while a run is being chosen (runs, none shown yet: run_choice.ts waitForChoice)
    const choosing = s.run === null && runs.length > 0;
    if ((s.runs.status === 'ready' && !choosing) || s.runs.status === 'error') readiness.runsRendered();
  };
  ctl.store.subscribe(update);
}

/** The status line's remote cost: "remote: 12 requests · 40.2 MiB" (listings, ranged reads and size lookups). */
export function remoteCostText(cost: RemoteCost): string {
  const requests = cost.lists + cost.gets + cost.heads;
  return `remote: ${requests.toLocaleString('en-US')} requests · ${(cost.bytes / 2 ** 20).toFixed(1)} MiB`;
}

/**
 * The runs overview (opened from the header): one row per run — run, host(s), mode, traces, alerts, the first NaN's
 * op and line, status — sortable by any column; a click opens the run. And the picker's label of a run (its alert
 * count, "clean", "indexing n %"). Everything comes from the `runs` answer (each run's summary is what the server
 * had cached: "analyzing" until the run's root cause is built).
 */
import type { Controller } from '../../controller/controller.ts';
import type { RunInfo } from '../../api/wire.ts';
import type { State } from '../../store/store.ts';
import { el } from '../../widgets/panel.ts';
import { hasProblems } from '../../widgets/notices.ts';

const pct = (r: RunInfo) =>
  r.status.bytes_total > 0 ? Math.floor((100 * r.status.bytes_read) / r.status.bytes_total) : 0;

/** What a run holds, in a word or two: "165 alerts", "clean", "indexing 42 %", "analyzing", "no NaN/∞ info". */
export function runStatusText(r: RunInfo): string {
  if (!r.status.done) return `indexing ${pct(r)} %`;
  const n = r.counts.alerts;
  if (n > 0) return `${n.toLocaleString('en-US')} alert${n === 1 ? '' : 's'}`;
  switch (r.summary?.status) {
    case 'clean': {
      // "clean" only once the rules are judged too: a run with only rule findings is not clean
      const rules = r.summary.rule_findings;
      if (rules === undefined) return 'no NaN/∞';
      return rules > 0 ? `no NaN/∞, ${rules} rule finding${rules === 1 ? '' : 's'}` : 'clean';
    }
    case 'analyzing':
      return 'analyzing';
    default:
      return 'no NaN/∞ info';
  }
}

/** The picker's label: the name, what it holds, and a mark for a run with errors. */
export function runLabel(r: RunInfo): string {
  return `${r.name}${r.framework === 'jax' ? ' [JAX]' : ''} — ${runStatusText(r)}${hasProblems(r) ? ' (errors)' : ''}`;
}

function firstNanText(r: RunInfo): string {
  const f = r.summary?.first_nan;
  if (!f) return r.counts.alerts > 0 && r.summary?.status !== 'unknown' ? 'analyzing' : '—';
  const where = f.file ? ` · ${f.file.split('/').pop()}:${f.line ?? '?'}` : '';
  return `${f.op_name ?? f.op_type}${where}`;
}

/** Which framework wrote the run (the JAX writer or TensorFlow's dump callback). */
export const frameworkText = (r: RunInfo): string => (r.framework === 'jax' ? 'JAX' : 'TensorFlow');

type Key = 'name' | 'framework' | 'hosts' | 'mode' | 'traces' | 'alerts' | 'first' | 'status';
const COLUMNS: Array<[Key, string]> = [
  ['name', 'run'],
  ['framework', 'framework'],
  ['hosts', 'host(s)'],
  ['mode', 'mode'],
  ['traces', 'traces'],
  ['alerts', 'alerts'],
  ['first', 'first NaN/∞'],
  ['status', 'status'],
];

function sortValue(r: RunInfo, key: Key): string | number {
  switch (key) {
    case 'name':
      return r.name;
    case 'framework':
      return frameworkText(r);
    case 'hosts':
      return r.hosts.join(', ');
    case 'mode':
      return r.debug_modes.join('/');
    case 'traces':
      return r.counts.graph_executions;
    case 'alerts':
      return r.counts.alerts;
    case 'first':
      return r.summary?.first_nan?.wall_time ?? Number.POSITIVE_INFINITY;
    case 'status':
      return runStatusText(r);
  }
}

export class RunsOverview {
  readonly element = el('div', 'runs-overview');
  private table = el('table', 'runs-table');
  private sortKey: Key = 'first';
  private ascending = true;

  constructor(private readonly ctl: Controller) {
    this.element.dataset.testid = 'runs-overview';
    this.element.hidden = true;
    this.element.append(this.table);
    ctl.store.subscribe((s, prev) => {
      if (!this.element.hidden && (s.runs !== prev.runs || s.run !== prev.run)) this.render(s);
    });
  }

  toggle(): void {
    this.element.hidden = !this.element.hidden;
    if (!this.element.hidden) this.render(this.ctl.store.state);
  }

  private sortBy(key: Key): void {
    this.ascending = this.sortKey === key ? !this.ascending : true;
    this.sortKey = key;
    this.render(this.ctl.store.state);
  }

  private render(s: State): void {
    const runs = [...(s.runs.data?.runs ?? [])];
    const dir = this.ascending ? 1 : -1;
    runs.sort((a, b) => {
      const x = sortValue(a, this.sortKey);
      const y = sortValue(b, this.sortKey);
      return (x < y ? -1 : x > y ? 1 : a.name < b.name ? -1 : 1) * dir;
    });
    const head = el('tr');
    for (const [key, label] of COLUMNS) {
      const th = el(
        'th',
        this.sortKey === key ? 'sorted' : '',
        label + (this.sortKey === key ? (this.ascending ? ' ▴' : ' ▾') : ''),
      );
      th.dataset.key = key;
      th.tabIndex = 0;
      th.title = key === 'alerts' ? 'one per non-finite traced tensor or eager execution' : `sort by ${label}`;
      th.addEventListener('click', () => this.sortBy(key));
      th.addEventListener('keydown', (e) => e.key === 'Enter' && this.sortBy(key));
      head.append(th);
    }
    const body = el('tbody');
    for (const r of runs) {
      const tr = el('tr', r.name === s.run ? 'current' : '');
      tr.dataset.run = r.name;
      tr.tabIndex = 0;
      const cells = [
        r.name,
        frameworkText(r),
        r.hosts.join(', '),
        r.debug_modes.join('/'),
        r.counts.graph_executions.toLocaleString('en-US'),
        r.counts.alerts.toLocaleString('en-US'),
        firstNanText(r),
        runStatusText(r),
      ];
      for (const c of cells) tr.append(el('td', '', c));
      const open = () => {
        this.element.hidden = true;
        this.ctl.chooseRun(r.name);
      };
      tr.addEventListener('click', open);
      tr.addEventListener('keydown', (e) => e.key === 'Enter' && open());
      body.append(tr);
    }
    const thead = el('thead');
    thead.append(head);
    this.table.replaceChildren(thead, body);
  }
}

/** Picks the API's own explanation for an empty panel from the run's status notices (wire Notice.code). */
import type { Notice, RunInfo } from '../api/wire.ts';

export function reasonFrom(info: RunInfo | null, codes: string[], fallback: string): string {
  const notices: Notice[] = info?.status.notices ?? [];
  const hits = notices.filter((n) => codes.includes(n.code));
  const indexing = info && !info.status.done ? ' (still indexing; this updates live)' : '';
  if (hits.length) return hits.map((n) => n.message).join(' ') + indexing;
  return fallback + indexing;
}

/** Progress text such as "indexing 42% (1.2 MB of 2.9 MB)", or '' when done. */
export function progressText(info: RunInfo | null): string {
  if (!info || info.status.done) return '';
  const { bytes_read: read, bytes_total: total } = info.status;
  const mb = (n: number) => (n / 1e6).toFixed(1) + ' MB';
  const pct = total > 0 ? Math.floor((100 * read) / total) : 0;
  return `indexing ${pct}% (${mb(read)} of ${mb(total)})`;
}

/** What a panel shows while no run is selected: loading, the logdir-level reason (e.g. no dump found), or an error. */
export function noRunState(s: {
  runs: { status: string; data: { logdir: string; runs: unknown[]; notices: Notice[] } | null; error: string | null };
}): { kind: 'loading' } | { kind: 'empty'; text: string } | { kind: 'error'; text: string } {
  if (s.runs.status === 'error') return { kind: 'error', text: `Cannot load runs: ${s.runs.error}` };
  if (!s.runs.data) return { kind: 'loading' };
  if (s.runs.data.runs.length === 0) {
    const why = s.runs.data.notices.map((n) => n.message).join(' ');
    return { kind: 'empty', text: why || `No tfdbg2 dump found under ${s.runs.data.logdir}.` };
  }
  return { kind: 'empty', text: 'No run selected.' };
}

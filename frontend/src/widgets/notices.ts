/**
 * Turns the API's notices (wire Notice) into what the user reads: an empty panel's reason, and the status line's
 * compact problem summary with every detail kept for the tooltip and the expandable list. Pure functions (no DOM),
 * so the unit tests cover the wording; widgets/status_bar.ts draws them.
 */
import type { Notice, NoticeCode, RunInfo } from '../api/wire.ts';
import { isReadProblem, isStandingReadProblem } from '../api/notice_codes.ts';

/** The hint that the cause is looked at again, for notices the next refresh pass re-checks (not damage: a skipped
 * record stays skipped). Left out when the backend's message already says so. */
function withHint(text: string, n: Notice): string {
  if (!isReadProblem(n.code) || /every refresh|tried again|retried/i.test(n.message)) return text;
  return `${text}${/[.!?]$/.test(text) ? '' : '.'} It is tried again on every refresh.`;
}

/** The notice's message, led by its file's path when the message does not name it (messages name the base name
 * at most, which is ambiguous between runs in sub-folders). */
export function noticeText(n: Notice): string {
  let text = n.message.trim();
  if (n.file && !text.includes(n.file)) text = `${n.file}: ${text}`;
  return withHint(text, n);
}

/** One line per notice for the tooltip and the details list: severity, file and byte offset, then the message. */
export function noticeDetail(n: Notice): string {
  const where = noticeWhere(n);
  return withHint(`[${n.severity}]${where ? ' ' + where : ''}: ${n.message.trim()}`, n);
}

/** "FILE @ byte N", "FILE" or ''. */
export function noticeWhere(n: Notice): string {
  return n.file ? `${n.file}${n.offset !== undefined ? ` @ byte ${n.offset.toLocaleString('en-US')}` : ''}` : '';
}

/** Does the notice concern one of the run's files ending in one of `suffixes` (e.g. 'graph_execution_traces')? A
 * file-less refresh_failed (the whole run's pass failed) concerns every panel. */
function concerns(n: Notice, suffixes: string[]): boolean {
  if (!n.file) return n.code === 'refresh_failed';
  return suffixes.some((s) => n.file!.endsWith('.' + s));
}

export interface EmptyReason {
  kind: 'empty' | 'error';
  text: string;
}

/**
 * Why a panel is empty. A read problem with the file(s) the panel shows (`files`: dump file suffixes) comes first —
 * "no traces" would blame the program when the reader could not read them — then the API's explanations (`codes`),
 * then `fallback`. An error-level read problem makes the panel an error (red).
 */
export function emptyReason(
  info: RunInfo | null,
  codes: NoticeCode[],
  fallback: string,
  files: string[] = [],
): EmptyReason {
  const notices: Notice[] = info?.status.notices ?? [];
  const indexing = info && !info.status.done ? ' (still indexing; this updates live)' : '';
  const problems = notices.filter((n) => isStandingReadProblem(n) && concerns(n, files));
  if (problems.length) {
    const kind = problems.some((n) => n.severity === 'error') ? 'error' : 'empty';
    return { kind, text: problems.map(noticeText).join(' ') + ' This panel fills in once it can be read.' };
  }
  const hits = notices.filter((n) => codes.includes(n.code));
  if (hits.length) return { kind: 'empty', text: hits.map((n) => n.message).join(' ') + indexing };
  return { kind: 'empty', text: fallback + indexing };
}

/** emptyReason's text (kept for callers that only need the words). */
export function reasonFrom(info: RunInfo | null, codes: NoticeCode[], fallback: string, files: string[] = []): string {
  return emptyReason(info, codes, fallback, files).text;
}

export type Severity = Notice['severity'];

/** One entry of the status line: a summary (several notices of one kind and file become one line) and its details. */
export interface StatusItem {
  severity: Severity;
  /** The notices' code, or 'client' for a failure of the dashboard itself (e.g. the last poll failed). */
  code: NoticeCode | 'client';
  text: string;
  /** Every notice behind the entry, one line each (noticeDetail): nothing is lost by summarizing. */
  details: string[];
  /** For a one-notice entry: its file and byte offset ('' when it has none), shown under the text in the list. */
  where: string;
  /** The status line's words: what happened to which file, and whether it is retried (the list has the rest). */
  short: string;
}

/** The first sentence of `text` (". " ends it: file names hold dots but no ". "), plus the retry note if due. */
export function shortText(text: string, n: Pick<Notice, 'code'>): string {
  const cut = text.indexOf('. ');
  const first = cut > 0 ? text.slice(0, cut) : text.replace(/\.$/, '');
  return isReadProblem(n.code) ? `${first} (retried on every refresh)` : first;
}

const RANK: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

/** `items`, most severe first (stable: each severity keeps its order). */
export function bySeverity(items: StatusItem[]): StatusItem[] {
  return items.sort((a, b) => RANK[a.severity] - RANK[b.severity]);
}

/**
 * The status line's entries for `notices`, most severe first. Damaged records (up to 100 notices) become one entry
 * per file: "3 damaged records skipped in F (first at byte N)". Explanations of empty panels (no file, info level,
 * not a read problem) are left out: the panels show them. `scope` prefixes the details ('logdir' for the logdir's).
 */
export function summarizeNotices(notices: Notice[], scope = ''): StatusItem[] {
  const items: StatusItem[] = [];
  const damaged = new Map<string, Notice[]>();
  const prefix = scope ? `${scope}: ` : '';
  for (const n of notices) {
    if (n.code === 'damaged_record') {
      const key = n.file ?? '';
      damaged.set(key, [...(damaged.get(key) ?? []), n]);
    } else if (n.severity !== 'info' || n.code === 'partial_record' || isReadProblem(n.code)) {
      const text = prefix + noticeText(n);
      items.push({
        severity: n.severity,
        code: n.code,
        text,
        details: [prefix + noticeDetail(n)],
        where: noticeWhere(n),
        short: shortText(text, n),
      });
    }
  }
  for (const [file, list] of damaged) {
    const offsets = list.map((n) => n.offset).filter((o): o is number => o !== undefined);
    const first = offsets.length ? Math.min(...offsets) : undefined;
    const at = first !== undefined ? ` at byte ${first.toLocaleString('en-US')}` : '';
    const inFile = file || 'the dump';
    // Starts with "Damaged record" in both forms, so the line reads (and is searched) the same for one or many.
    const short =
      list.length === 1
        ? `Damaged record skipped in ${inFile}${at}`
        : `Damaged records: ${list.length} skipped in ${inFile} (first${at})`;
    const text = `${short}; the records around ${list.length === 1 ? 'it' : 'them'} were kept.`;
    const sev = list.some((n) => n.severity === 'error') ? 'error' : list[0]!.severity;
    // The list shows each damaged record's own message (it holds the reason, e.g. a CRC mismatch).
    items.push({
      severity: sev,
      code: 'damaged_record',
      text: prefix + text,
      details: list.map((n) => prefix + noticeDetail(n)),
      where: '',
      short: prefix + short,
    });
  }
  return bySeverity(items);
}

/** The worst severity among `items`, or null when there is none. */
export function worstSeverity(items: StatusItem[]): Severity | null {
  return items.reduce<Severity | null>((w, i) => (w === null || RANK[i.severity] < RANK[w] ? i.severity : w), null);
}

/** Does the run have an error worth flagging in the run picker? (Warnings such as a file not written yet are common
 * while a program starts: marking them would make the picker flicker.) */
export function hasProblems(info: RunInfo): boolean {
  return info.status.notices.some((n) => n.severity === 'error');
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
}): { kind: 'loading'; text?: string } | { kind: 'empty'; text: string } | { kind: 'error'; text: string } {
  if (s.runs.status === 'error') return { kind: 'error', text: `Cannot load runs: ${s.runs.error}` };
  if (!s.runs.data) return { kind: 'loading' };
  if (s.runs.data.runs.length === 0) {
    // The first scan has not looked yet: not "no dump" (the header says "scanning").
    if (s.runs.data.notices.some((n) => n.code === 'scanning')) return { kind: 'loading' };
    // One message per empty state: the header's status line holds the why; the panels do not repeat it six times.
    return { kind: 'empty', text: 'No tfdbg2 dump to show (the status line above says why).' };
  }
  // Runs, but none shown: the controller waits for their summaries to open the right one (run_choice.ts).
  return { kind: 'loading', text: 'Choosing the run to open…' };
}

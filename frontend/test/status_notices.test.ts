/** The wording of run problems: empty-panel reasons that name an unreadable file, and the status line's summary. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  emptyReason,
  hasProblems,
  noticeDetail,
  noticeText,
  reasonFrom,
  summarizeNotices,
  worstSeverity,
} from '../src/widgets/notices.ts';
import type { Notice } from '../src/api/wire.ts';
import { runInfo } from './fake_api.ts';

const TRACES = 'tfdbg_events.1.graph_execution_traces';
const unreadable: Notice = {
  code: 'unreadable_file',
  severity: 'error',
  file: TRACES,
  offset: 0,
  message: `Cannot read ${TRACES}: it is a directory, not a file. The run's other files are still read; this one is tried again on every refresh.`,
};

test('an unreadable traces file is the graph panel reason, as an error, not "no traces"', () => {
  const info = runInfo('a', 0, 0);
  info.status.notices = [
    unreadable,
    { code: 'no_graph_executions', severity: 'info', message: 'No graph executions recorded.' },
  ];
  const r = emptyReason(info, ['no_graph_executions'], 'This run has no graph execution traces.', [
    'graph_execution_traces',
  ]);
  assert.equal(r.kind, 'error');
  assert.match(r.text, /Cannot read tfdbg_events\.1\.graph_execution_traces: it is a directory/);
  assert.doesNotMatch(r.text, /No graph executions recorded|has no graph execution traces/);
  // The execution-file panel is not blamed on the traces file.
  assert.equal(
    reasonFrom(info, ['no_executions'], 'This run has no eager executions.', ['execution']),
    'This run has no eager executions.',
  );
  // Without the file argument (old callers) the explanation stays as before.
  assert.equal(reasonFrom(info, ['no_graph_executions'], 'x'), 'No graph executions recorded.');
});

test('missing and refresh_failed files are reasons too; a run-wide failure concerns every panel', () => {
  const info = runInfo('a', 0, 0);
  info.status.notices = [
    {
      code: 'missing_file',
      severity: 'warning',
      file: 'tfdbg_events.1.execution',
      message: 'execution file not found (yet): tfdbg_events.1.execution.',
    },
  ];
  const r = emptyReason(info, ['no_executions'], 'none', ['execution']);
  assert.equal(r.kind, 'empty', 'a warning is not painted as an error');
  assert.match(r.text, /not found \(yet\).*tried again on every refresh/);
  info.status.notices = [
    { code: 'refresh_failed', severity: 'error', message: "refreshing run a failed: ValueError('boom')" },
  ];
  const w = emptyReason(info, [], 'none', ['graph_execution_traces']);
  assert.equal(w.kind, 'error');
  assert.match(w.text, /ValueError\('boom'\)\. It is tried again on every refresh\./);
});

test('a notice names its file and offset', () => {
  const n: Notice = {
    code: 'refresh_failed',
    severity: 'error',
    file: 'sub/x.execution',
    offset: 1234,
    message: "reading x.execution failed: KeyError('k')",
  };
  assert.equal(
    noticeText(n),
    "sub/x.execution: reading x.execution failed: KeyError('k'). It is tried again on every refresh.",
  );
  assert.equal(
    noticeDetail(n),
    "[error] sub/x.execution @ byte 1,234: reading x.execution failed: KeyError('k'). It is tried again on every refresh.",
  );
  assert.equal(
    noticeText({ code: 'unreadable_file', severity: 'error', file: 'run/f.graphs', message: 'Permission denied.' }),
    'run/f.graphs: Permission denied. It is tried again on every refresh.',
  );
  // The backend's own retry wording is not repeated.
  assert.equal(noticeText(unreadable), unreadable.message);
});

test('damaged records are counted per file, first offset shown, every record kept in the details', () => {
  const damaged = (file: string, offset: number): Notice => ({
    code: 'damaged_record',
    severity: 'error',
    file,
    offset,
    message: `Damaged record skipped in x at byte ${offset} (CRC mismatch); every intact record around it was kept.`,
  });
  const notices = [
    damaged('a.execution', 900),
    damaged('a.execution', 100),
    damaged('a.execution', 500),
    damaged('a.graphs', 64),
    {
      code: 'partial_record',
      severity: 'info',
      file: 'a.execution',
      offset: 2000,
      message: 'execution file ends inside a record.',
    } as Notice,
    { code: 'still_indexing', severity: 'info', message: 'Still reading.' } as Notice,
    unreadable,
  ];
  const items = summarizeNotices(notices);
  assert.deepEqual(
    items.map((i) => i.code),
    ['unreadable_file', 'damaged_record', 'damaged_record', 'partial_record'],
    'errors first; explanations left to the panels',
  );
  const many = items.find((i) => i.text.includes('a.execution'))!;
  assert.equal(
    many.text,
    'Damaged records: 3 skipped in a.execution (first at byte 100); the records around them were kept.',
  );
  assert.equal(many.details.length, 3);
  assert.match(many.details.join('\n'), /a\.execution @ byte 900: Damaged record/);
  const one = items.find((i) => i.text.includes('a.graphs'))!;
  assert.equal(one.text, 'Damaged record skipped in a.graphs at byte 64; the records around it were kept.');
  assert.equal(one.short, 'Damaged record skipped in a.graphs at byte 64');
  assert.equal(many.short, 'Damaged records: 3 skipped in a.execution (first at byte 100)');
  // The status line keeps the first sentence (what, which file) and says the file is retried; the list has the rest.
  assert.equal(items[0]!.short, `Cannot read ${TRACES}: it is a directory, not a file (retried on every refresh)`);
  assert.equal(worstSeverity(items), 'error');
  assert.equal(worstSeverity(summarizeNotices([notices[4]!])), 'info');
  assert.equal(worstSeverity([]), null);
});

test('100 damaged records stay one short line', () => {
  const notices: Notice[] = Array.from({ length: 100 }, (_, i) => ({
    code: 'damaged_record',
    severity: 'error',
    file: 'f.graph_execution_traces',
    offset: 1000 + i * 50,
    message: `Damaged record at byte ${1000 + i * 50}.`,
  }));
  const items = summarizeNotices(notices);
  assert.equal(items.length, 1);
  assert.ok(items[0]!.text.length < 120, items[0]!.text);
  assert.match(items[0]!.text, /^Damaged records: 100 skipped in f\.graph_execution_traces \(first at byte 1,000\)/);
  assert.equal(items[0]!.details.length, 100);
});

test('logdir notices are scoped; only errors mark a run in the picker', () => {
  const folder: Notice = {
    code: 'unreadable_file',
    severity: 'error',
    file: 'locked',
    message:
      'Cannot list the folder locked (Permission denied): dumps inside it are not shown. It is tried again on every refresh.',
  };
  const [item] = summarizeNotices([folder], 'logdir');
  assert.equal(item!.text, 'logdir: ' + folder.message);
  assert.match(item!.details[0]!, /^logdir: \[error\] locked: Cannot list/);
  const info = runInfo('a', 1, 0);
  assert.equal(hasProblems(info), false);
  info.status.notices = [{ code: 'missing_file', severity: 'warning', message: 'not yet' }];
  assert.equal(hasProblems(info), false);
  info.status.notices = [unreadable];
  assert.equal(hasProblems(info), true);
});

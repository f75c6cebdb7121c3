/**
 * The unit tests' reporter (`npm test`): a failure in full (its test, file and error with the assertion's diff and
 * stack) as it happens, and otherwise one summary line — node's default reporters print a line or more per test.
 * node sets the exit code itself: any failure still fails `npm test`.
 */
import path from 'node:path';
import process from 'node:process';
import { inspect } from 'node:util';

const SUMMARY_KEYS = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /;

export default async function* summaryReporter(source) {
  const counts = { passed: 0, failed: 0, skipped: 0, todo: 0 };
  const started = Date.now();
  for await (const { type, data } of source) {
    if (type === 'test:pass' && data.details?.type !== 'suite') {
      if (data.skip !== undefined) counts.skipped++;
      else if (data.todo !== undefined) counts.todo++;
      else counts.passed++;
    } else if (type === 'test:fail' && data.details?.type !== 'suite') {
      counts.failed++;
      const where = data.file ? `${path.relative(process.cwd(), data.file)}: ` : '';
      const error = data.details?.error;
      yield `\n✖ ${where}${data.name}\n${inspect(error?.cause ?? error, { depth: 4 })}\n\n`;
    } else if (type === 'test:stdout' || type === 'test:stderr') {
      yield data.message; // what a test printed itself: rare, and wanted when it happens
    } else if (type === 'test:diagnostic' && !SUMMARY_KEYS.test(data.message)) {
      yield `${data.message}\n`;
    }
  }
  const extra = [counts.skipped && `${counts.skipped} skipped`, counts.todo && `${counts.todo} todo`].filter(Boolean);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  yield `${counts.passed} passed, ${counts.failed} failed${extra.map((e) => `, ${e}`).join('')} (${seconds} s)\n`;
}

/**
 * What the notice codes mean to the client, apart from any widget: the controller (poll sooner) and the notices
 * wording (empty-panel reasons, status line) both ask.
 */
import type { Notice, NoticeCode } from './wire.ts';

/** Codes for a file the reader could not read this pass: the panel fed by that file is empty or stale because of it.
 * The backend looks at their cause again on every refresh pass (the controller polls sooner while one stands). */
export const READ_PROBLEMS: readonly NoticeCode[] = ['unreadable_file', 'missing_file', 'refresh_failed'];

export function isReadProblem(code: NoticeCode): boolean {
  return READ_PROBLEMS.includes(code);
}

/** A read problem worth acting on: an info-level one (e.g. a file not written yet by design) is not. */
export function isStandingReadProblem(n: Notice): boolean {
  return isReadProblem(n.code) && n.severity !== 'info';
}

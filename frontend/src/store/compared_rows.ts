/**
 * A Graph Execution row while the run shown (B) is compared with a baseline run (A) (#27): the row as
 * `graph_executions` lists it plus its difference from A, from the same `compare_rows` page (so the difference
 * column never waits for, or disagrees with, the rows it is drawn beside).
 */
import type { GraphExecutionRow, TraceDifference } from '../api/wire.ts';

export type ComparedRow = GraphExecutionRow & { difference?: TraceDifference };

/** The row's difference from the baseline run, when the list is a compared one. */
export const differenceOf = (row: GraphExecutionRow): TraceDifference | undefined => (row as ComparedRow).difference;

/** Whether Graph Execution shows the difference column: a comparison answered for the run shown. */
export const comparing = (s: { compareBase: string | null; compare: { status: string } }): boolean =>
  s.compareBase !== null && s.compare.status === 'ready';

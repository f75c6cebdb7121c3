/**
 * Graph Execution with a comparison on (#27): the difference column (each row's difference from the baseline run,
 * as the server measured it for that very row: "=" equal, "0.5 / 0.25" max abs / max rel, "NaN 0→3" health
 * counts, "only in changed"; blank when not compared) and the "divergent only" toggle (a filter the server pages, so the
 * list scrolls through every differing trace, not a first page of them).
 */
import type { TraceDifference } from '../../api/wire.ts';
import type { CompareCounts } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';
import { asBaseline, divergentSplit, ROLE_A } from '../compare/compare_text.ts';

/** The column's cell for one row (`undefined`: the row came without a difference, e.g. before the comparison);
 * `base`: the baseline run's name, for the titles. */
export function differenceCell(difference: TraceDifference | undefined, base: string | null): HTMLElement {
  const cell = el('span', 'ge-diff');
  cell.dataset.testid = 'ge-difference';
  if (!difference) return cell;
  cell.dataset.status = difference.status;
  cell.classList.add(`ge-diff-${difference.status}`);
  cell.title = differenceTitle(difference, asBaseline(base));
  if (difference.status === 'differs') {
    const mark = el('span', 'cmp-mark', 'Δ');
    mark.dataset.testid = 'ge-divergent';
    mark.title = `differs from ${asBaseline(base)}: ${difference.summary}`;
    cell.append(mark, ' ');
  }
  cell.append(difference.text);
  return cell;
}

function differenceTitle(d: TraceDifference, baseline: string): string {
  if (d.status === 'same') return `within tolerance of ${baseline}: ${d.summary}`;
  if (d.status === 'only_in_b')
    return `only in the changed run: ${baseline} has no aligned trace (an op or an occurrence it lacks)`;
  if (d.status === 'not_compared') return `not compared: ${d.summary}`;
  return `differs from ${baseline}: ${d.summary}`;
}

/** The header cell of the column (shown only while comparing). */
export function differenceHead(): HTMLElement {
  const head = el('span', 'ge-diff-head', `Δ vs ${ROLE_A}`);
  head.hidden = true;
  return head;
}

/** The header's title, naming the baseline run compared with. */
export function nameDifferenceHead(head: HTMLElement, base: string | null): void {
  head.title = `Difference from ${asBaseline(base)}: max abs / max rel (FULL_TENSOR), the counts that change (health modes)`;
}

/** "divergent only": a checkbox in the panel's tools, shown only while comparing. */
export class DivergentToggle {
  readonly element = el('label', 'filter-divergent');
  readonly input = el('input');
  private readonly label = document.createTextNode('divergent only');

  constructor(onChange: () => void) {
    this.input.type = 'checkbox';
    this.input.dataset.testid = 'filter-divergent';
    this.element.title = 'Only the traces that differ from the baseline run or that it lacks (all of them, paged)';
    this.element.append(this.input, this.label);
    this.element.hidden = true;
    this.input.addEventListener('change', onChange);
  }

  show(comparing: boolean, checked: boolean, counts?: CompareCounts): void {
    this.element.hidden = !comparing;
    this.input.checked = comparing && checked;
    // the card's count, split: this filter lists the traces (and those only in changed: an added op is a change);
    // the eager executions are in the card's list
    const added = counts?.only_in_b_traces
      ? ` + ${counts.only_in_b_traces.toLocaleString('en-US')} only in changed`
      : '';
    this.label.textContent = counts ? `divergent only (${divergentSplit(counts)}${added})` : 'divergent only';
  }
}

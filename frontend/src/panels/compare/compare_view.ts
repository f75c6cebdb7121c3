/**
 * "Compare with…" (#27): a picker in the header choosing the baseline run A for the run shown (B), and a card
 * under it with the first divergence (both runs' op and line, the difference, the inputs side by side) and the
 * differing tensors in B's order ("divergent only"). A click on the finding or on a row focuses every panel on B's
 * side of it. What cannot be compared (different programs or modes, a run still being written) is the card's
 * notice, in the server's words.
 */
import type { CompareFinding, CompareItem, CompareResponse, CompareSide } from '../../api/wire.ts';
import type { Controller } from '../../controller/controller.ts';
import type { State } from '../../store/store.ts';
import { el } from '../../widgets/panel.ts';
import { baseName } from '../stack_trace/fold.ts';
import { asBaseline, asChanged, divergentSplit, headline, ROLE_A, ROLE_B, runsLine } from './compare_text.ts';
import { ToleranceRow } from './tolerance_row.ts';

function where(side: CompareSide | null): string {
  if (!side) return 'not in this run';
  const what = side.op_name ?? side.op_type ?? '?';
  const at = side.file ? ` · ${baseName(side.file)}:${side.line}` : '';
  return `${what}:${side.output}${side.op_type && side.op_name ? ` (${side.op_type})` : ''} #${side.occurrence}${at}`;
}

function sideBlock(label: 'A' | 'B', run: string, side: CompareSide | null): HTMLElement {
  const block = el('div', 'cmp-side');
  block.dataset.testid = `compare-side-${label}`;
  const role = el('b', '', `${label === 'A' ? ROLE_A : ROLE_B} `);
  block.append(role, el('span', 'cmp-run', run), ': ', el('span', 'cmp-where', where(side)));
  if (side?.code) block.append(el('pre', 'cmp-code', `${side.line}: ${side.code}`));
  return block;
}

function itemRow(item: CompareItem, ctl: Controller): HTMLElement {
  const row = el('div', 'cmp-item');
  row.dataset.testid = 'compare-item';
  row.tabIndex = 0;
  row.title = 'Focus every panel on this tensor in the changed run';
  row.append(el('span', 'cmp-where', where(item.b)), el('span', 'muted', ` — ${item.metric.summary}`));
  row.addEventListener('click', () => void ctl.compare.focusSide(item.b));
  return row;
}

/** The finding's difference, and of which tensor: when the changed run's ops are the finding, the difference is
 * measured further down (the baseline side's tensor), not at those ops. */
function metricLine(first: CompareFinding): HTMLElement {
  const summary = first.metric?.summary ?? '';
  const at = first.kind === 'follows_from_only_in_b' && first.a;
  const line = el('div', 'cmp-metric', `difference: ${summary}`);
  if (at) line.textContent = `difference, measured at ${at.op_name ?? at.op_type}:${at.output}: ${summary}`;
  line.dataset.testid = 'compare-metric';
  return line;
}

const INPUT_STATUS: Record<CompareFinding['inputs'][number]['status'], string> = {
  same: 'same',
  differs: 'differs',
  only_in_b: `only in ${ROLE_B}`,
  not_recorded: 'not recorded',
};

/** "input act:0: same (same counts)": the status, and the measure when it adds to it. */
function inputLine(input: CompareFinding['inputs'][number]): string {
  const summary = input.metric?.summary;
  return `input ${input.name}: ${INPUT_STATUS[input.status]}${summary && summary !== input.status ? ` (${summary})` : ''}`;
}

const MAX_VALUE_ROWS = 200;

function num(v: unknown): number {
  return typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : Number(v as string);
}

/** The first divergence's values in A and B and their difference, element by element (the first ones). */
export function renderValues(target: HTMLElement, s: State): void {
  target.replaceChildren();
  const v = s.compareValues;
  if (v.status === 'idle') return;
  if (v.status === 'loading') return void target.append(el('div', 'muted', 'reading both values…'));
  if (v.status === 'error' || !v.data) return void target.append(el('div', 'cmp-error', `values: ${v.error}`));
  const { a, b } = v.data;
  const base = asBaseline(s.compareBase);
  const changed = asChanged(s.run);
  const va = a.slice?.values ?? [];
  const vb = b.slice?.values ?? [];
  if (!va.length || !vb.length) {
    target.append(el('div', 'muted', a.note ?? b.note ?? 'no values recorded'));
    return;
  }
  const table = el('table', 'cmp-values');
  table.dataset.testid = 'compare-values';
  const head = el('tr');
  const dtypeShape = (t: typeof a) => `${t.dtype} ${JSON.stringify(t.shape)}`;
  for (const t of ['#', `${base} ${dtypeShape(a)}`, `${changed} ${dtypeShape(b)}`, `${ROLE_A} − ${ROLE_B}`])
    head.append(el('th', '', t));
  table.append(head);
  const n = Math.min(va.length, vb.length, MAX_VALUE_ROWS);
  for (let i = 0; i < n; i++) {
    const diff = num(va[i]) - num(vb[i]);
    const row = el('tr', diff !== 0 && !Number.isNaN(diff) ? 'cmp-differs' : '');
    if (row.className) row.style.color = '#c33';
    row.append(el('td', '', String(i)), el('td', '', String(va[i])), el('td', '', String(vb[i])));
    row.append(el('td', '', Number.isNaN(diff) ? String(diff) : diff.toPrecision(6)));
    table.append(row);
  }
  target.append(table);
  if (Math.max(va.length, vb.length) > n)
    target.append(el('div', 'muted', `first ${n} of ${Math.max(va.length, vb.length)} elements`));
}

/** The card's kept parts, drawn into each answer: the tolerance fields and the values table. */
interface CardParts {
  tolerances: HTMLElement;
  values: HTMLElement;
}

function renderAnswer(card: HTMLElement, answer: CompareResponse, ctl: Controller, parts: CardParts): void {
  const n = answer.counts;
  const head = el('div', 'cmp-head');
  head.dataset.testid = 'compare-head';
  head.textContent =
    `${runsLine(answer.run, answer.base, answer.mode)}: matched ${n.matched}, ` +
    `divergent ${n.divergent} (${divergentSplit(n)}), only in ${ROLE_A} ${n.only_in_a}, only in ${ROLE_B} ${n.only_in_b}`;
  card.append(head, parts.tolerances);
  const first = answer.first_divergence;
  if (!first) {
    const ok = el('div', 'cmp-none', `${headline(answer.mode, false)}: every aligned tensor within tolerance.`);
    ok.dataset.testid = 'compare-none';
    card.append(ok);
  } else {
    const finding = el('div', 'cmp-finding');
    finding.dataset.testid = 'compare-finding';
    finding.dataset.kind = first.kind;
    finding.tabIndex = 0;
    finding.setAttribute('role', 'button');
    finding.title = 'Focus every panel on the changed run’s side of the first divergence';
    const title = el('div', 'cmp-title', `${headline(answer.mode, true)}: ${first.why}`);
    title.dataset.testid = 'compare-headline';
    finding.append(title, sideBlock('A', answer.base, first.a), sideBlock('B', answer.run, first.b));
    if (first.metric) finding.append(metricLine(first));
    for (const input of first.inputs) finding.append(el('div', 'cmp-input muted', inputLine(input)));
    const b = first.b;
    if (b) finding.addEventListener('click', () => void ctl.compare.focusSide(b));
    const a = first.a;
    if (a && b && first.metric?.dtype_a !== undefined) {
      const values = el('button', 'cmp-values-btn', `values: ${ROLE_A} | ${ROLE_B} | ${ROLE_A} − ${ROLE_B}`);
      values.dataset.testid = 'compare-values-open';
      values.title = "Both runs' values of this tensor side by side, and their difference";
      values.addEventListener('click', (e) => {
        e.stopPropagation();
        void ctl.compare.values(a, b);
        // and Tensor Values on B's side: it shows A, B and A − B side by side while comparing (compare_values)
        ctl.tensors.open({ source: b.source, index: b.index, output: b.source === 'graph' ? null : b.output });
      });
      finding.append(values);
    }
    card.append(finding);
    card.append(parts.values);
  }
  if (answer.divergent.length) {
    const list = el('div', 'cmp-list');
    list.append(el('div', 'muted', `divergent only (${divergentSplit(n)}, in the changed run's order):`));
    list.append(...answer.divergent.map((item) => itemRow(item, ctl)));
    card.append(list);
  }
  for (const note of answer.notes) card.append(el('div', 'cmp-note muted', note));
}

// Docked at the top of the Alerts column (where the root-cause card lives), in the flow: it covers no panel at any
// width, folded or not (a fixed card covered Graph Execution's Δ column, and Stack Trace when folded); the column's
// Alerts list shrinks under it and the card scrolls within its share.
const CARD_STYLE =
  'flex:0 1 auto;min-height:0;max-height:60%;overflow:auto;margin:4px;padding:6px 8px;' +
  'background:var(--bg, #fff);border:1px solid #c44;border-left:5px solid #c44;border-radius:4px;font-size:12px';

let foldShown: ((folded: boolean) => boolean) | null = null;

/** Folds (or unfolds) the card: the intent an Escape handler for every overlay calls. True when it changed the
 * card (shown and not already so), false when there is nothing to fold. */
export function foldCompareCard(folded = true): boolean {
  return foldShown ? foldShown(folded) : false;
}

export function buildCompare(header: HTMLElement, ctl: Controller, dock: HTMLElement): void {
  const picker = el('select', 'compare-picker');
  picker.dataset.testid = 'compare-picker';
  picker.title =
    'Compare the run shown (the changed run) with another run (the baseline): where do they start to differ?';
  const label = el('label', 'compare-label');
  label.append(document.createTextNode(' Compare with… '), picker);
  const card = el('div', 'compare-card');
  card.dataset.testid = 'compare-card';
  card.style.cssText = CARD_STYLE;
  card.hidden = true;
  const close = el('button', 'cmp-close', '×');
  close.title = 'Stop comparing';
  close.addEventListener('click', () => void ctl.compare.choose(null));
  const fold = foldButton(card); // the panels under the card (Graph Execution's column, the rings) show when folded
  header.append(label);
  dock.prepend(card);
  // on the overlay stack while shown unfolded: Escape folds it, one overlay at a time (#40 item 9)
  const followStack = () => {
    const open = !card.hidden && !card.classList.contains('folded');
    if (!open) ctl.overlays.closed('compare');
    else if (!ctl.store.state.overlays.includes('compare')) ctl.overlays.opened('compare', () => foldCompareCard(true));
  };
  fold.addEventListener('click', followStack);
  foldShown = (folded) => {
    if (card.hidden || card.classList.contains('folded') === folded) return false;
    fold.click();
    return true;
  };
  picker.addEventListener('change', () => void ctl.compare.choose(picker.value || null));
  const valuesBlock = el('div', 'cmp-values-block');
  const tolerances = new ToleranceRow(ctl);
  let shown: unknown = null;
  let shownValues: unknown = null;
  let options = '';
  ctl.store.subscribe((s: State) => {
    const names = (s.runs.data?.runs ?? []).map((r) => r.name).filter((n) => n !== s.run);
    if (names.join('\n') !== options) {
      options = names.join('\n');
      picker.replaceChildren(
        Object.assign(el('option', '', '—'), { value: '' }),
        ...names.map((n) => Object.assign(el('option', '', n), { value: n })),
      );
    }
    picker.value = s.compareBase ?? '';
    tolerances.show(s.compareTolerances);
    label.hidden = names.length === 0;
    if (s.compareValues !== shownValues) {
      shownValues = s.compareValues;
      renderValues(valuesBlock, s);
    }
    if (s.compare === shown) return;
    shown = s.compare;
    card.hidden = s.compare.status === 'idle';
    followStack();
    card.replaceChildren(close, fold);
    // the tolerance fields stay while the comparison is made again at them: a field being typed in is not lost
    if (s.compare.status === 'loading')
      card.append(el('div', 'muted', `comparing with ${asBaseline(s.compareBase)}…`), tolerances.element);
    else if (s.compare.status === 'error') {
      const notice = el('div', 'cmp-error', `Cannot compare: ${s.compare.error}`);
      notice.dataset.testid = 'compare-error';
      card.append(notice, tolerances.element); // a refused tolerance is mended here
    } else if (s.compare.data)
      renderAnswer(card, s.compare.data, ctl, { tolerances: tolerances.element, values: valuesBlock });
  });
}

/** Folds the card to its first line (and back): the Alerts list under it gets the column back. */
function foldButton(card: HTMLElement): HTMLElement {
  const fold = el('button', 'cmp-fold', '–');
  fold.dataset.testid = 'compare-fold';
  fold.title = 'Fold the card to one line, out of the way of the panels';
  fold.addEventListener('click', () => {
    const folded = card.classList.toggle('folded');
    fold.textContent = folded ? '+' : '–';
    fold.title = folded ? 'Unfold the card' : 'Fold the card to one line, out of the way of the panels';
  });
  return fold;
}

/**
 * The gutter of Source Code's op markers (CodeMirror's gutter API): on each line that created graph ops, a button
 * with their count, red when one of them has a non-finite output. Its title says what the count holds; click, or
 * Enter / Space when it has the keyboard focus (it is a button), asks for the line's list.
 *
 * The handler sits on the button, not in the gutter's `domEventHandlers`: those find the line from the pointer's
 * height, which a keyboard-made click does not have.
 *
 * The markers are one Tab stop (a roving tabindex: the last one used, else the first drawn), Up and Down move
 * between them: a file with 40 marked lines is not 40 Tab stops on the way to Stack Trace.
 */
import { RangeSet, RangeSetBuilder, StateEffect, StateField, type EditorState } from '@codemirror/state';
import { EditorView, GutterMarker, gutter } from '@codemirror/view';
import type { SourceLineCount } from '../../api/wire.ts';

/** Asks for the list of a line's ops (the panel passes the controller's intent). */
export type OpenLine = (line: number) => void;

/** What one marker says in words: its title and its accessible name. */
export function markerTitle(c: SourceLineCount): string {
  const ops = c.ops === 1 ? '1 graph op' : `${c.ops.toLocaleString('en-US')} graph ops`;
  const how =
    c.direct === c.ops ? 'made here' : c.direct === 0 ? 'made through a call here' : `${c.direct} made here directly`;
  const bad = c.nonfinite ? `, ${c.nonfinite} with NaN/∞ output` : '';
  return `Line ${c.line}: ${ops} ${how}${bad}. Click to list them.`;
}

/** The count as the marker shows it (short: the gutter is narrow). */
export function markerText(ops: number): string {
  return ops < 1000 ? String(ops) : ops < 100_000 ? `${Math.floor(ops / 1000)}k` : '∞k';
}

class OpsMarker extends GutterMarker {
  constructor(
    readonly count: SourceLineCount,
    readonly open: OpenLine,
  ) {
    super();
  }

  override eq(other: OpsMarker): boolean {
    const a = this.count;
    const b = other.count;
    return a.line === b.line && a.ops === b.ops && a.direct === b.direct && a.nonfinite === b.nonfinite;
  }

  override toDOM(): HTMLElement {
    const c = this.count;
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'cm-ops-marker' + (c.nonfinite ? ' nonfinite' : '') + (c.direct === 0 ? ' through' : '');
    b.textContent = markerText(c.ops);
    b.title = markerTitle(c);
    b.setAttribute('aria-label', b.title);
    b.dataset.testid = 'line-ops-marker';
    b.dataset.line = String(c.line);
    b.tabIndex = -1; // markerRoving gives one marker the Tab stop
    b.addEventListener('keydown', (e) => moveAmongMarkers(b, e));
    b.addEventListener('focus', () => (lastUsed = c.line));
    b.addEventListener('click', (e) => {
      e.preventDefault();
      this.open(c.line);
    });
    // CodeMirror would move its selection on a mousedown in the gutter; the click is ours
    b.addEventListener('mousedown', (e) => e.stopPropagation());
    return b;
  }
}

/** New markers: the counts of the file shown (lines outside the document are left out). */
export const setOpCounts = StateEffect.define<{ counts: SourceLineCount[]; open: OpenLine }>();

function markersOf(state: EditorState, counts: SourceLineCount[], open: OpenLine): RangeSet<GutterMarker> {
  const b = new RangeSetBuilder<GutterMarker>();
  for (const c of counts) {
    if (c.line >= 1 && c.line <= state.doc.lines) {
      const from = state.doc.line(c.line).from;
      b.add(from, from, new OpsMarker(c, open));
    }
  }
  return b.finish();
}

const markersField = StateField.define<RangeSet<GutterMarker>>({
  create: () => RangeSet.empty,
  update(v, tr) {
    for (const e of tr.effects) if (e.is(setOpCounts)) return markersOf(tr.state, e.value.counts, e.value.open);
    return tr.docChanged ? RangeSet.empty : v;
  },
});

/** The line of the marker last focused (the roving Tab stop returns to it while it is drawn). */
let lastUsed: number | null = null;

function markersIn(el: Element): HTMLButtonElement[] {
  return [...(el.closest('.cm-editor') ?? el).querySelectorAll<HTMLButtonElement>('.cm-ops-marker')].filter(
    (m) => Number(m.dataset.line) > 0, // not the gutter's width spacer
  );
}

function moveAmongMarkers(b: HTMLButtonElement, e: KeyboardEvent): void {
  if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
  e.preventDefault();
  const all = markersIn(b);
  const next = all[all.indexOf(b) + (e.key === 'ArrowDown' ? 1 : -1)];
  if (!next) return;
  b.tabIndex = -1;
  next.tabIndex = 0;
  next.focus();
}

/** After each update (markers drawn as lines scroll into view): exactly one drawn marker is a Tab stop. */
const markerRoving = EditorView.updateListener.of((u) => {
  const all = markersIn(u.view.dom);
  const stop = all.find((m) => m.dataset.line === String(lastUsed)) ?? all[0];
  for (const m of all) m.tabIndex = m === stop ? 0 : -1;
});

/** The gutter's extension: the field of markers and the gutter that shows them (left of the line numbers). */
export const opGutter = [
  markerRoving,
  markersField,
  gutter({
    class: 'cm-ops-gutter',
    markers: (view) => view.state.field(markersField),
    // the gutter keeps the width of its widest marker, so it does not jump as lines scroll into view
    initialSpacer: () => new OpsMarker({ line: 0, ops: 999, direct: 0, nonfinite: 0 }, () => undefined),
  }),
];

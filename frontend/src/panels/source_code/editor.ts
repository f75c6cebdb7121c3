/**
 * The CodeMirror 6 view behind Source Code: read-only, Python highlighting, line numbers, one focused line
 * (highlighted and centred), marks on lines that created ops and the op markers' gutter (op_gutter.ts).
 * Everything CodeMirror-specific lives here.
 */
import { Compartment, EditorState, RangeSetBuilder, StateEffect, StateField } from '@codemirror/state';
import { Decoration, EditorView, lineNumbers, type DecorationSet } from '@codemirror/view';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { python } from '@codemirror/lang-python';
import { tags } from '@lezer/highlight';
import type { SourceLineCount } from '../../api/wire.ts';
import { opGutter, setOpCounts, type OpenLine } from './op_gutter.ts';

const setFocus = StateEffect.define<number | null>();
const setOpLines = StateEffect.define<number[]>();

function lineDeco(state: EditorState, lines: number[], cls: string): DecorationSet {
  const b = new RangeSetBuilder<Decoration>();
  const deco = Decoration.line({ class: cls });
  for (const n of [...new Set(lines)].sort((a, c) => a - c)) {
    if (n >= 1 && n <= state.doc.lines) b.add(state.doc.line(n).from, state.doc.line(n).from, deco);
  }
  return b.finish();
}

const focusField = StateField.define<{ line: number | null; deco: DecorationSet }>({
  create: () => ({ line: null, deco: Decoration.none }),
  update(v, tr) {
    for (const e of tr.effects)
      if (e.is(setFocus))
        return { line: e.value, deco: e.value ? lineDeco(tr.state, [e.value], 'cm-focus-line') : Decoration.none };
    return tr.docChanged ? { line: null, deco: Decoration.none } : v;
  },
  provide: (f) => EditorView.decorations.from(f, (v) => v.deco),
});

const opLinesField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(v, tr) {
    for (const e of tr.effects) if (e.is(setOpLines)) return lineDeco(tr.state, e.value, 'cm-op-line');
    return tr.docChanged ? Decoration.none : v.map(tr.changes);
  },
  provide: (f) => EditorView.decorations.from(f),
});

// Both styles keep 4.5:1 (WCAG AA) on the page and on the focused line's background (CodeMirror's default style
// draws f-string prefixes and escapes in #e40: 3.8:1 on white).
const lightHighlight = HighlightStyle.define([
  { tag: tags.keyword, color: '#708' },
  { tag: [tags.string, tags.special(tags.string), tags.regexp, tags.escape], color: '#a11' },
  { tag: tags.comment, color: '#940', fontStyle: 'italic' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: '#164' },
  { tag: [tags.definition(tags.variableName), tags.definition(tags.function(tags.variableName))], color: '#00f' },
  { tag: [tags.typeName, tags.className], color: '#085' },
  { tag: [tags.variableName, tags.propertyName, tags.operator], color: 'inherit' },
  { tag: tags.invalid, color: '#b00' },
]);

const darkHighlight = HighlightStyle.define([
  { tag: tags.keyword, color: '#c792ea' },
  { tag: [tags.string, tags.special(tags.string)], color: '#c3e88d' },
  { tag: tags.comment, color: '#9aa5b1', fontStyle: 'italic' },
  { tag: [tags.number, tags.bool, tags.null], color: '#f78c6c' },
  { tag: [tags.function(tags.variableName), tags.definition(tags.function(tags.variableName))], color: '#82aaff' },
  { tag: tags.className, color: '#ffcb6b' },
]);

export class SourceEditor {
  readonly view: EditorView;
  private theme = new Compartment();

  constructor(parent: HTMLElement, dark = false) {
    this.view = new EditorView({
      parent,
      state: EditorState.create({ doc: '', extensions: this.extensions(dark) }),
    });
  }

  private extensions(dark: boolean) {
    return [
      EditorState.readOnly.of(true),
      EditorView.editable.of(false),
      lineNumbers(),
      opGutter,
      python(),
      focusField,
      opLinesField,
      this.theme.of(this.themeExt(dark)),
    ];
  }

  private themeExt(dark: boolean) {
    return [
      dark ? syntaxHighlighting(darkHighlight) : syntaxHighlighting(lightHighlight),
      EditorView.theme({}, { dark }),
    ];
  }

  setDark(dark: boolean): void {
    this.view.dispatch({ effects: this.theme.reconfigure(this.themeExt(dark)) });
  }

  setDoc(lines: string[], opLines: number[]): void {
    const doc = lines.join('\n');
    this.view.dispatch({ changes: { from: 0, to: this.view.state.doc.length, insert: doc } });
    this.view.dispatch({ effects: setOpLines.of(opLines), selection: { anchor: 0 }, scrollIntoView: true });
  }

  /** The op markers of the document shown (set after its text). */
  setOpCounts(counts: SourceLineCount[], open: OpenLine): void {
    this.view.dispatch({ effects: setOpCounts.of({ counts, open }) });
  }

  /** Where line `line` is drawn, in viewport coordinates (null when it is not in the document or not drawn). */
  lineBox(line: number): { top: number; bottom: number; left: number } | null {
    const doc = this.view.state.doc;
    if (line < 1 || line > doc.lines) return null;
    const box = this.view.coordsAtPos(doc.line(line).from);
    return box ? { top: box.top, bottom: box.bottom, left: this.view.contentDOM.getBoundingClientRect().left } : null;
  }

  /** The marker button of `line`, when drawn (focus goes back to it when its list closes). */
  markerOf(line: number): HTMLElement | null {
    return this.view.dom.querySelector<HTMLElement>(`.cm-ops-marker[data-line="${line}"]`);
  }

  /** Highlights `line` (1-based) and centres it; null clears the highlight and shows the top. */
  focusLine(line: number | null): void {
    const doc = this.view.state.doc;
    if (line === null || line < 1 || line > doc.lines) {
      this.view.dispatch({ effects: [setFocus.of(null), EditorView.scrollIntoView(0, { y: 'start' })] });
      return;
    }
    const pos = doc.line(line).from;
    this.view.dispatch({ effects: [setFocus.of(line), EditorView.scrollIntoView(pos, { y: 'center' })] });
  }

  focusedLine(): number | null {
    return this.view.state.field(focusField).line;
  }
}

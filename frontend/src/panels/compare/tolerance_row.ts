/**
 * The comparison's tolerances on the card (#39): atol and rtol for every float dtype, empty for the server's
 * per-dtype defaults. A change compares again at them, and every compare request (the card, Graph Execution's Δ
 * column, the rings, Tensor Values' baseline | changed | difference) sends them, so all views measure alike. What is
 * not a number ≥ 0 is marked and not sent.
 */
import type { CompareTolerances } from '../../api/requests.ts';
import type { Controller } from '../../controller/controller.ts';
import { el } from '../../widgets/panel.ts';

const KEYS = ['atol', 'rtol'] as const;

/** A field's text as a tolerance: undefined when empty (the default), null when it is not one. */
function parsed(text: string): number | undefined | null {
  const t = text.trim();
  if (t === '') return undefined;
  const x = Number(t);
  return Number.isFinite(x) && x >= 0 ? x : null;
}

export class ToleranceRow {
  readonly element = el('div', 'cmp-tol');
  private readonly inputs = new Map<(typeof KEYS)[number], HTMLInputElement>();
  private shown: CompareTolerances | null = null;

  constructor(ctl: Controller) {
    this.element.dataset.testid = 'compare-tolerances';
    this.element.title =
      'Tolerances of the comparison: |changed − baseline| ≤ atol + rtol·|baseline| for every float dtype; ' +
      'empty: by dtype (float32 1e-6 / 1e-5, float16 1e-3 / 1e-3, …)';
    this.element.append(el('span', 'muted', 'tolerance '));
    for (const key of KEYS) {
      const input = el('input', 'cmp-tol-input');
      input.type = 'text';
      input.inputMode = 'decimal';
      input.size = 7;
      input.placeholder = 'by dtype';
      input.dataset.testid = `compare-${key}`;
      input.setAttribute('aria-label', key);
      input.addEventListener('change', () => this.apply(ctl));
      this.inputs.set(key, input);
      this.element.append(el('label', '', `${key} `), input, ' ');
    }
  }

  /** The fields show the tolerances in force when they change (a reload or a permalink set them too); what the
   * user is typing, in any field, stays until then. */
  show(tol: CompareTolerances): void {
    if (tol === this.shown) return;
    this.shown = tol;
    for (const key of KEYS) {
      const input = this.inputs.get(key)!;
      if (document.activeElement !== input) input.value = tol[key] === undefined ? '' : String(tol[key]);
    }
  }

  private apply(ctl: Controller): void {
    const tol: CompareTolerances = {};
    let bad = false;
    for (const key of KEYS) {
      const input = this.inputs.get(key)!;
      const value = parsed(input.value);
      input.classList.toggle('cmp-tol-bad', value === null);
      input.setAttribute('aria-invalid', String(value === null));
      if (value === null) bad = true;
      else if (value !== undefined) tol[key] = value;
    }
    if (!bad) void ctl.compare.setTolerances(tol);
  }
}

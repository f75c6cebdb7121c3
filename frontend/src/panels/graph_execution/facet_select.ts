/**
 * One facet of Graph Execution (device or host): a select of the run's values with their trace counts, "any" first;
 * hidden while it could not tell rows apart (one value) and nothing is chosen (store/facets.ts facetShown).
 */
import { facetShown, type FacetOption } from '../../store/facets.ts';
import { el } from '../../widgets/panel.ts';

export class FacetSelect {
  readonly element = el('select', 'ge-facet');
  private shownKey = '';

  constructor(
    testId: string,
    private readonly anyLabel: string,
    onChange: () => void,
  ) {
    this.element.dataset.testid = testId;
    this.element.setAttribute('aria-label', anyLabel);
    this.element.hidden = true;
    this.element.addEventListener('change', onChange);
  }

  /** The chosen value, or undefined for "any". */
  get value(): string | undefined {
    return this.element.value || undefined;
  }

  /** Shows `options` with `chosen` selected; rebuilt only when they change (a rebuild while open would close it). */
  show(options: FacetOption[], chosen: string | undefined): void {
    const key = JSON.stringify([options, chosen ?? '']);
    if (key === this.shownKey) return;
    this.shownKey = key;
    const any = Object.assign(el('option', '', this.anyLabel), { value: '' });
    const items = options.map((o) => {
      const option = Object.assign(el('option', '', `${o.label} (${o.traces.toLocaleString('en-US')})`), {
        value: o.value,
      });
      option.title = o.value;
      return option;
    });
    this.element.replaceChildren(any, ...items);
    this.element.value = chosen ?? '';
    this.element.title = chosen ?? this.anyLabel;
    this.element.hidden = !facetShown(options, chosen);
  }
}

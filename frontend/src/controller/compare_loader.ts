/**
 * "Compare with…" (#27), part of the controller: the baseline run A chosen for the run shown (B), the `compare`
 * answer (first divergence, the first page of differing tensors in B's order), and focusing a side of it. Picking
 * another run shown clears the comparison (store.ts runViewState).
 */
import type { Api } from '../api/client.ts';
import type { CompareTolerances } from '../api/requests.ts';
import type { CompareSide } from '../api/wire.ts';
import { idle, loading, type Store } from '../store/store.ts';
import { Latest, settle } from './latest.ts';

/** Differing tensors fetched for the card's list ("divergent only"). */
export const COMPARE_PAGE = 200;

export interface CompareFocus {
  focusGraphExecution(index: number): Promise<void>;
  focusExecution(index: number): Promise<void>;
  /** Graph Execution lists its rows again: with their differences from the baseline, or without (#27). */
  reopenTraces(): void;
}

export class CompareLoader {
  private readonly latest = new Latest();

  constructor(
    private readonly store: Store,
    private readonly api: Api,
    private readonly focus: CompareFocus,
  ) {}

  /** Compare the run shown with `base` (null: stop comparing). */
  async choose(base: string | null): Promise<void> {
    const run = this.store.state.run;
    const live = this.latest.beginForRun(this.store);
    if (base === null || run === null || !this.api.compare) {
      const was = this.store.state.compareBase;
      this.store.set({ compareBase: null, compare: idle(), compareValues: idle() });
      if (was !== null) this.focus.reopenTraces();
      return;
    }
    this.store.set({ compareBase: base, compare: loading(), compareValues: idle() });
    const answer = this.api.compare(run, base, 0, COMPARE_PAGE, this.store.state.compareTolerances);
    await settle(answer, live, (compare) => {
      this.store.set({ compare });
      if (compare.status === 'ready') this.focus.reopenTraces(); // cached on the server now: the rows reuse it
    });
  }

  /** The tolerances the user set (#39): the comparison is made again at them, and every view that shows it
   * (Graph Execution's rows, the rings, Tensor Values) asks again with them. */
  setTolerances(tol: CompareTolerances): Promise<void> {
    this.store.set({ compareTolerances: tol });
    return this.choose(this.store.state.compareBase);
  }

  /** Both runs' values of a pair of sides (FULL_TENSOR), for the A | B | A − B table. */
  async values(a: CompareSide, b: CompareSide): Promise<void> {
    const run = this.store.state.run;
    const base = this.store.state.compareBase;
    if (run === null || base === null) return;
    const live = this.latest.current(() => run === this.store.state.run);
    const target = (side: CompareSide) => ({
      source: side.source,
      index: side.index,
      output: side.source === 'graph' ? null : side.output,
    });
    this.store.set({ compareValues: loading() });
    const both = Promise.all([this.api.tensor(base, target(a), '...'), this.api.tensor(run, target(b), '...')]);
    await settle(
      both.then(([va, vb]) => ({ a: va, b: vb })),
      live,
      (compareValues) => this.store.set({ compareValues }),
    );
  }

  /** Focus every panel on run B's side of a finding (the run shown is B). */
  focusSide(side: CompareSide): Promise<void> {
    return side.source === 'graph' ? this.focus.focusGraphExecution(side.index) : this.focus.focusExecution(side.index);
  }
}

/**
 * The Tensor Values view while comparing (#27), part of the controller: whenever the view shows a tensor of run B
 * (the run shown) and a baseline run A is chosen, the `compare_values` answer for the view's tensor and its
 * window of values — B's values, A's aligned counterpart (or "no counterpart in A") and A − B over the same slice.
 * It follows the view: a new tensor, another plane, a scrolled window or another baseline asks again; the newest
 * answer wins. Without a baseline or an open view it holds nothing.
 */
import type { Api } from '../api/client.ts';
import { idle, loading, type State, type Store } from '../store/store.ts';
import { windowSpec } from '../store/tensor_math.ts';
import { Latest, settle } from './latest.ts';

export class CompareValuesLoader {
  private readonly latest = new Latest();
  private asked = '';

  constructor(
    private readonly store: Store,
    private readonly api: Api,
  ) {
    store.subscribe((s) => this.follow(s));
  }

  /** The request the state calls for (its key), or null when there is none to make. */
  private request(s: State): { run: string; base: string; slice: string | undefined; key: string } | null {
    const v = s.tensorView;
    if (!v || s.compareBase === null || s.run === null || !this.api.compareValues) return null;
    if (v.summary.status !== 'ready') return null; // the slice needs B's shape and plane
    const shape = v.summary.data?.shape;
    const slice = shape && v.plane ? windowSpec(shape, v.plane, v.window) : undefined;
    const key = JSON.stringify([s.run, s.compareBase, v.target, slice ?? null, s.compareTolerances]);
    return { run: s.run, base: s.compareBase, slice, key };
  }

  private follow(s: State): void {
    const want = this.request(s);
    if (want === null) {
      const closed = !s.tensorView || s.compareBase === null || s.run === null;
      if (closed && this.asked !== '') {
        this.asked = '';
        this.latest.drop();
        this.store.set({ compareTensor: idle() });
      }
      return;
    }
    if (want.key === this.asked) return;
    this.asked = want.key;
    void this.load(
      want.run,
      want.base,
      want.slice,
      this.latest.begin(() => want.key === this.asked),
    );
  }

  private async load(run: string, base: string, slice: string | undefined, live: () => boolean): Promise<void> {
    const target = this.store.state.tensorView!.target;
    this.store.set({ compareTensor: loading(this.store.state.compareTensor) });
    const answer = this.api.compareValues!(run, base, target, slice, this.store.state.compareTolerances);
    await settle(answer, live, (compareTensor) => this.store.set({ compareTensor }));
  }
}

/**
 * "Latest request wins" and "ready or failed", written once for the loaders: a loader's new request makes its
 * earlier ones stale (their answers are dropped, never drawn over a newer one), and an answer becomes
 * `ready(answer)`, or its error `failed(error)`, in the store slot being loaded, unless it went stale meanwhile.
 */
import { failed, ready, type Loadable, type Store } from '../store/store.ts';

/** The requests of one store slot: only the latest one's answer counts. */
export class Latest {
  private seq = 0;

  /** A new request: the check returned holds until the next begin() or drop(), and while `still()` does. */
  begin(still: () => boolean = () => true): () => boolean {
    const mine = ++this.seq;
    return () => mine === this.seq && still();
  }

  /** A new request for the run shown now: it holds while it is the latest and that run is still shown. */
  beginForRun(store: Store): () => boolean {
    const run = store.state.run;
    return this.begin(() => run === store.state.run);
  }

  /** A check on the request made last, starting none (a second answer it waits for): it holds until the next
   * begin() or drop(), and while `still()` does. */
  current(still: () => boolean = () => true): () => boolean {
    const now = this.seq;
    return () => now === this.seq && still();
  }

  /** Every request in flight goes stale (the view they were for is gone). */
  drop(): void {
    this.seq++;
  }
}

/** Awaits `answer`, then puts ready(value), or failed(error), through `put` if `live()` still holds. */
export function settle<T>(answer: Promise<T>, live: () => boolean, put: (value: Loadable<T>) => void): Promise<void> {
  return attempt(
    async () => {
      const value = await answer;
      if (live()) put(ready(value));
    },
    live,
    (e) => put(failed(e)),
  );
}

/** Runs the awaited steps of one request (each step checks `live()` after its await); an error of any step goes
 * to `fail` if `live()` still holds (a stale request's failure is dropped like its answer). */
export async function attempt(
  steps: () => Promise<void>,
  live: () => boolean,
  fail: (error: unknown) => void,
): Promise<void> {
  try {
    await steps();
  } catch (e) {
    if (live()) fail(e);
  }
}

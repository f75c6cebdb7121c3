/**
 * "Latest request wins" and "ready or failed", written once for the loaders: a loader's new request makes its
 * earlier ones stale (their answers are dropped, never drawn over a newer one), and an answer becomes
 * `ready(answer)`, or its error `failed(error)`, in the store slot being loaded, unless it went stale meanwhile.
 */
import { failed, ready, type Loadable } from '../store/store.ts';

/** The requests of one store slot: only the latest one's answer counts. */
export class Latest {
  private seq = 0;

  /** A new request: the check returned holds until the next begin() or drop(). */
  begin(): () => boolean {
    const mine = ++this.seq;
    return () => mine === this.seq;
  }

  /** Every request in flight goes stale (the view they were for is gone). */
  drop(): void {
    this.seq++;
  }
}

/** Awaits `answer`, then puts ready(value), or failed(error), through `put` if `live()` still holds. */
export async function settle<T>(
  answer: Promise<T>,
  live: () => boolean,
  put: (value: Loadable<T>) => void,
): Promise<void> {
  try {
    const value = await answer;
    if (live()) put(ready(value));
  } catch (e) {
    if (live()) put(failed(e));
  }
}

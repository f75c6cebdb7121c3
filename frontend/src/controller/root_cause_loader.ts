/**
 * The root-cause card's data (part of the controller): the `root_cause` answer for the run shown, after the mutes.
 * Asked when a run is shown, when alerts appear, once when the run is read to its end, and when the mutes change.
 */
import type { Api } from '../api/client.ts';
import { loading, type Store } from '../store/store.ts';
import { mutesParam } from '../store/mutes.ts';
import { Latest, settle } from './latest.ts';

export class RootCauseLoader {
  private readonly latest = new Latest();

  constructor(
    private readonly store: Store,
    private readonly api: Api,
  ) {}

  async load(): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const live = this.latest.beginForRun(this.store);
    // The card keeps showing the last answer while a live run's new one is fetched.
    if (this.store.state.rootCause.status !== 'loading')
      this.store.set({ rootCause: loading(this.store.state.rootCause) });
    const answer = this.api.rootCause(run, mutesParam(this.store.state.mutes));
    await settle(answer, live, (rootCause) => this.store.set({ rootCause }));
  }
}

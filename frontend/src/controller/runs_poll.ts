/**
 * When the controller asks `runs` again (part of the controller): every second while the run is still being
 * written or indexed, backing off to 30 s when idle (4 s while a read problem stands), at once when woken.
 */
import { isStandingReadProblem } from '../api/notice_codes.ts';
import type { Store } from '../store/store.ts';

export class RunsPoll {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private delay = 1000;
  private stopped = false;

  /** `refresh` asks `runs` and says whether anything changed (the poll then stays at its fastest). */
  constructor(
    private readonly store: Store,
    private readonly refresh: () => Promise<boolean>,
  ) {}

  schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(async () => {
      const changed = await this.refresh();
      const info = this.store.runInfo();
      const busy = !info || !info.status.done;
      // A file the backend retries on every pass (unreadable, missing, failed) may be fixed any moment: the user
      // who fixes it expects the dashboard to follow within seconds, not after the 30 s idle back-off.
      const retrying = info?.status.notices.some(isStandingReadProblem) ?? false;
      this.delay = changed || busy ? 1000 : Math.min(this.delay * 2, retrying ? 4000 : 30000);
      this.schedule();
    }, this.delay);
  }

  /** Now, then every second again (e.g. the tab became visible again). */
  soon(): void {
    this.delay = 1000;
    if (this.timer !== null) clearTimeout(this.timer);
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
  }
}

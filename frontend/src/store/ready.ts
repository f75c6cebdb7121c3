/**
 * The readiness marker the benchmark and the end-to-end tests wait for: `document.body.dataset.ready = "1"` once
 * the first runs response and the first page of every non-empty panel have rendered.
 *
 * Panels call `begin(key)` when they start their first load and `end(key)` once it is drawn (or failed, or found
 * nothing to draw). Ready fires when runs are in and nothing is pending, after a frame so late `begin`s count.
 */
export class Readiness {
  private pending = new Set<string>();
  private runsDone = false;
  private fired = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly onReady: () => void) {}

  begin(key: string): void {
    if (this.fired) return;
    this.pending.add(key);
  }

  end(key: string): void {
    if (this.fired) return;
    this.pending.delete(key);
    this.check();
  }

  runsRendered(): void {
    this.runsDone = true;
    this.check();
  }

  get isReady(): boolean {
    return this.fired;
  }

  private check(): void {
    if (this.fired || !this.runsDone || this.pending.size > 0 || this.timer !== null) return;
    // Wait a little: a panel reacting to the same update may begin its load right after this call.
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.fired || this.pending.size > 0) return;
      this.fired = true;
      this.onReady();
    }, 50);
  }
}

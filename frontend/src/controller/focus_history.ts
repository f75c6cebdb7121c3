/**
 * Focus history: each change of focus is a history entry (url.ts pushes it), so the browser's Back — and the
 * in-app back button — steps back one focus. The controller asks `pushFor` whether a focus change is a new entry,
 * `saved` after writing it, and runs a Back through `restore` (what it focuses then makes no entry of its own).
 */
import type { Focus, Store } from '../store/store.ts';

const sameFocus = (a: Focus | null, b: Focus | null) => a?.kind === b?.kind && a?.index === b?.index;

export class FocusHistory {
  /** Entries this session pushed and has not gone back over. */
  private depth = 0;
  private restoring = false;

  constructor(private readonly store: Store) {}

  /** A new entry for a change of focus; the first focus of a run replaces the entry (Back from it would show
   * nothing different), and so does a focus that Back itself restores. */
  pushFor(before: Focus | null, focus: Focus): boolean {
    return before !== null && !sameFocus(before, focus) && !this.restoring;
  }

  saved(pushed: boolean): void {
    if (!pushed) return;
    this.depth++;
    if (!this.store.state.canGoBack) this.store.set({ canGoBack: true });
  }

  canGoBack(): boolean {
    return this.depth > 0;
  }

  async restore(apply: () => Promise<void>): Promise<void> {
    this.depth = Math.max(0, this.depth - 1);
    this.restoring = true;
    try {
      await apply();
    } finally {
      this.restoring = false;
      this.store.set({ canGoBack: this.depth > 0 });
    }
  }
}

/**
 * What lies over the dashboard, in the order it opened (#40 item 9): the keys' help, Capsules, the compare card,
 * Tensor Values. Escape closes the topmost one, one at a time (keys.ts calls `closeTop`). The order is the store's
 * `overlays` (panels and tests read it); how each one closes is the opener's own intent, kept here, since a function
 * is no state. Tensor Values is followed from the store (it opens from many places); the others say when they open
 * and close.
 */
import type { OverlayId, Store } from '../store/store.ts';

export class OverlayStack {
  private readonly closers = new Map<OverlayId, () => boolean>();

  constructor(
    private readonly store: Store,
    closeTensor: () => void,
  ) {
    store.subscribe((s, prev) => {
      if (s.tensorView && !prev.tensorView)
        this.opened('tensor', () => {
          closeTensor();
          return true;
        });
      else if (!s.tensorView && prev.tensorView) this.closed('tensor');
    });
  }

  /** `id` is on screen now, on top; `close` takes it away (false: it was gone already, hidden some other way). */
  opened(id: OverlayId, close: () => boolean): void {
    this.closers.set(id, close);
    this.store.set({ overlays: [...this.store.state.overlays.filter((o) => o !== id), id] });
  }

  /** `id` is gone (closed by its own button, or by `closeTop`). */
  closed(id: OverlayId): void {
    if (!this.store.state.overlays.includes(id)) return;
    this.closers.delete(id);
    this.store.set({ overlays: this.store.state.overlays.filter((o) => o !== id) });
  }

  /** Closes the topmost overlay still on screen; false when none is (Escape then does what it did before). */
  closeTop(): boolean {
    for (let top = this.store.state.overlays.at(-1); top !== undefined; top = this.store.state.overlays.at(-1)) {
      const close = this.closers.get(top);
      this.closed(top);
      if (close?.()) return true;
    }
    return false;
  }
}

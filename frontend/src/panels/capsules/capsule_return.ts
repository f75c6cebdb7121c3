/**
 * Where closing Tensor Values returns (#36): a capsule's array or sample opened from the Capsules panel hides the
 * panel while Tensor Values is up; closing Tensor Values (its close button, or whatever closes it: w39's Escape stack
 * included) shows the panel again, on the card it came from. Opening another tensor meanwhile (a dumped one, from
 * the panels) drops the return: closing that one leaves the dashboard as it is.
 */
import type { Store } from '../../store/store.ts';

export class ReturnToCapsules {
  private armed = false;

  constructor(store: Store, show: () => void) {
    store.subscribe((s, prev) => {
      if (!this.armed || s.tensorView === prev.tensorView) return;
      if (s.tensorView === null) {
        this.armed = false;
        show();
      } else if (!s.tensorView.target.capsule) {
        this.armed = false;
      }
    });
  }

  /** Call just before opening a capsule array in Tensor Values from the panel. */
  arm(): void {
    this.armed = true;
  }
}

/**
 * Dashboard keys that work as soon as the tab opens: `n` / `p` step through the alerts, and the arrows,
 * Home/End and PageUp/PageDown go to the Graph Execution list when no widget holds the focus; `?` shows the keys
 * (panels/help/), Escape closes the topmost overlay, one at a time (controller/overlay_stack.ts).
 *
 * Inside TensorBoard the dashboard is an iframe: until someone clicks into it, keys go to TensorBoard's page. The
 * same handler therefore also listens on the parent document when it is same-origin (TensorBoard serves both), and
 * only while this frame is on screen (the Debugger tab is the one shown).
 */
import type { Controller } from './controller/controller.ts';

const LIST_KEYS = new Set(['ArrowUp', 'ArrowDown', 'Home', 'End', 'PageUp', 'PageDown']);

function typing(t: EventTarget | null): boolean {
  const e = t as HTMLElement | null;
  return !!e && (e.tagName === 'INPUT' || e.tagName === 'SELECT' || e.tagName === 'TEXTAREA' || e.isContentEditable);
}

/** `list`: the widget the list keys go to when nothing in the dashboard has the focus; `help`: `?`'s toggle. */
export function installKeys(ctl: Controller, list: () => HTMLElement, help: () => void): void {
  const onKey = (e: KeyboardEvent, fromParent: boolean) => {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === 'Escape' && ctl.overlays.closeTop()) {
      e.preventDefault(); // one overlay per press, whatever holds the focus (a field of the one closed, too)
      return;
    }
    if (typing(e.target)) return;
    if (e.key === '?') {
      e.preventDefault();
      help();
      return;
    }
    if (ctl.store.state.tensorView) return; // the Tensor Values pane is over the lists: keys would move them unseen
    if (e.key === 'n' || e.key === 'p') {
      e.preventDefault();
      void ctl.stepAlert(e.key === 'n' ? 1 : -1);
      return;
    }
    const idle = fromParent || document.activeElement === document.body || document.activeElement === null;
    if (!LIST_KEYS.has(e.key) || !idle) return;
    e.preventDefault();
    const target = list();
    window.focus();
    target.focus();
    target.dispatchEvent(new KeyboardEvent('keydown', { key: e.key, bubbles: true, cancelable: true }));
  };
  document.addEventListener('keydown', (e) => onKey(e, false));
  let parentDoc: Document | null = null;
  try {
    if (window.parent !== window) parentDoc = window.parent.document;
  } catch {
    parentDoc = null; // cross-origin parent: keys work once the frame has the focus
  }
  const frame = window.frameElement as HTMLElement | null;
  parentDoc?.addEventListener('keydown', (e) => {
    // Only while the Debugger tab is the one shown, and not when TensorBoard's own page is being typed into.
    if (!frame || frame.getClientRects().length === 0 || document.hidden) return;
    onKey(e, true);
  });
}

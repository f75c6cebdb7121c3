/**
 * Follows TensorBoard's light/dark theme. The plugin iframe is same-origin, so the parent's
 * `body.dark-mode` class is read directly and watched with a MutationObserver.
 */
export function parentIsDark(): boolean {
  try {
    const body = window.parent?.document?.body;
    if (body && window.parent !== window) return body.classList.contains('dark-mode');
  } catch {
    // Cross-origin parent: fall back to the OS preference.
  }
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ?? false;
}

export function watchTheme(apply: (dark: boolean) => void): void {
  apply(parentIsDark());
  try {
    const body = window.parent?.document?.body;
    if (body && window.parent !== window) {
      new MutationObserver(() => apply(parentIsDark())).observe(body, { attributes: true, attributeFilter: ['class'] });
      return;
    }
  } catch {
    // ignore: cross-origin
  }
  window.matchMedia?.('(prefers-color-scheme: dark)').addEventListener('change', () => apply(parentIsDark()));
}

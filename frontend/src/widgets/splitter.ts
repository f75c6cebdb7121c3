/**
 * Resizable splitters between flex children. A splitter sits between two siblings; dragging it moves pixels from
 * one to the other by setting the first sibling's flex-basis (the second keeps flex: 1). Sizes are fractions of the
 * parent so the layout survives window resizes.
 */
export type Direction = 'row' | 'column';

/** Clamps the first pane's fraction so neither pane shrinks below `minPx`. */
export function clampFraction(fraction: number, totalPx: number, minPx: number): number {
  if (totalPx <= 2 * minPx) return 0.5;
  const lo = minPx / totalPx;
  return Math.min(Math.max(fraction, lo), 1 - lo);
}

export function makeSplitter(dir: Direction, first: HTMLElement, testId: string, minPx = 80): HTMLDivElement {
  const bar = document.createElement('div');
  bar.className = `splitter splitter-${dir}`;
  bar.dataset.testid = testId;
  bar.setAttribute('role', 'separator');
  bar.setAttribute('aria-orientation', dir === 'row' ? 'vertical' : 'horizontal');
  bar.addEventListener('pointerdown', (down) => {
    const parent = bar.parentElement;
    if (!parent) return;
    down.preventDefault();
    bar.setPointerCapture(down.pointerId);
    const rect = parent.getBoundingClientRect();
    const firstRect = first.getBoundingClientRect();
    const total = dir === 'row' ? rect.width : rect.height;
    const start = dir === 'row' ? down.clientX : down.clientY;
    const startSize = dir === 'row' ? firstRect.width : firstRect.height;
    const move = (e: PointerEvent) => {
      const pos = dir === 'row' ? e.clientX : e.clientY;
      const f = clampFraction((startSize + pos - start) / total, total, minPx);
      first.style.flex = `0 0 ${(f * 100).toFixed(3)}%`;
    };
    const up = () => {
      bar.removeEventListener('pointermove', move);
      bar.removeEventListener('pointerup', up);
      window.dispatchEvent(new Event('resize'));
    };
    bar.addEventListener('pointermove', move);
    bar.addEventListener('pointerup', up);
  });
  return bar;
}

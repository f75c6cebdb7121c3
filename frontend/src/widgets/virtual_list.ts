/**
 * Virtual list: fixed row height, only visible rows in the DOM, rows asked for as they come into view (whoever owns
 * them fetches them and hands back a new RowSource), and a scroll position scaled past the browser's maximum element
 * height (see scroll_math.ts) so 10 M rows scroll end to end.
 *
 * DOM: a scroller holding a sticky "rows" layer (one viewport tall) and a spacer; rows are absolutely positioned
 * inside the layer from the model's fractional first row. When scaled, wheel events move by rows, not pixels.
 */
import { ListModel, type RequestRows, type RowSource } from './list_model.ts';
import { inFrame } from '../ready.ts';

export interface VirtualListOptions<T> {
  rowHeight: number;
  /** The rows in view changed: fetch those not fetched yet. Called once scrolling pauses, never per frame. */
  requestRows: RequestRows;
  /** Fills a row element; `item` is undefined while its page loads. Must use textContent for untrusted text. */
  renderRow(el: HTMLElement, item: T | undefined, index: number): void;
  /** Arrow keys / click moved the selection. */
  onSelect?(index: number, item: T | undefined): void;
  /** Enter or double click. */
  onActivate?(index: number, item: T | undefined): void;
  /** After each draw (for "first page rendered" readiness and status text). */
  onDraw?(list: VirtualList<T>): void;
  testId?: string;
  /** Extra class per row (e.g. tint input rows), applied after renderRow. */
  rowClass?(index: number, item: T | undefined): string | null;
}

export class VirtualList<T> {
  readonly element: HTMLDivElement;
  readonly model: ListModel<T>;
  private readonly scroller: HTMLDivElement;
  private readonly layer: HTMLDivElement;
  private readonly spacer: HTMLDivElement;
  private rowEls = new Map<number, HTMLDivElement>();
  private expectedTop = -1;
  /** The scroller's scrollTop as last reported by a scroll event or set by draw(). draw() never reads it: a read
   * after any DOM write (this list's or another panel's) forces a layout of the whole dashboard, and at first paint
   * those forced layouts were ~25 ms of the iframe's ~190 ms (bench/paint_profile.py, Chromium's profiler). */
  private knownTop = 0;
  /** A row revealed before the first resize report: centring needs the height, so it is revealed again then. */
  private pendingReveal: { index: number; center: boolean } | null = null;
  private frame = 0;
  private fetchTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly opts: VirtualListOptions<T>) {
    this.model = new ListModel<T>(opts.rowHeight, opts.requestRows);
    this.element = document.createElement('div');
    this.element.className = 'vl';
    this.element.tabIndex = 0;
    if (opts.testId) this.element.dataset.testid = opts.testId;
    this.scroller = document.createElement('div');
    this.scroller.className = 'vl-scroller';
    this.scroller.tabIndex = -1; // the list element is the one Tab stop (Chromium makes a scrollable box one too)
    this.layer = document.createElement('div');
    this.layer.className = 'vl-layer';
    this.spacer = document.createElement('div');
    this.spacer.className = 'vl-spacer';
    this.scroller.append(this.layer, this.spacer);
    this.element.append(this.scroller);

    this.scroller.addEventListener('scroll', () => {
      const top = this.scroller.scrollTop;
      this.knownTop = top;
      if (Math.abs(top - this.expectedTop) < 1) return;
      this.model.setScrollTop(top);
      this.draw();
    });
    this.scroller.addEventListener('wheel', (e) => this.onWheel(e), { passive: false });
    this.element.addEventListener('keydown', (e) => this.onKey(e));
    this.layer.addEventListener('click', (e) => {
      const idx = this.indexOfEvent(e);
      if (idx !== null) this.select(idx, false);
    });
    this.layer.addEventListener('dblclick', (e) => {
      const idx = this.indexOfEvent(e);
      if (idx !== null) opts.onActivate?.(idx, this.model.item(idx));
    });
    // The viewport height comes from here, so draw() never reads layout: with several lists drawing in one frame,
    // each read after another's writes would force a layout of the whole dashboard.
    new ResizeObserver((entries) => {
      const h = entries[entries.length - 1]?.contentRect.height ?? 0;
      if (h > 0) this.model.viewport = h;
      if (h > 0 && this.pendingReveal) {
        this.model.reveal(this.pendingReveal.index, this.pendingReveal.center);
        this.pendingReveal = null;
      }
      this.draw();
    }).observe(this.scroller);
  }

  private indexOfEvent(e: Event): number | null {
    const row = (e.target as HTMLElement).closest<HTMLElement>('.vl-row');
    if (!row || row.dataset.index === undefined) return null;
    return Number(row.dataset.index);
  }

  private scaled(): boolean {
    return this.model.total * this.model.rowHeight > this.model.spacerHeight();
  }

  private onWheel(e: WheelEvent): void {
    if (!this.scaled()) return; // native scrolling is exact below the height cap
    e.preventDefault();
    const rows =
      e.deltaMode === 1
        ? e.deltaY
        : e.deltaMode === 2
          ? e.deltaY * (this.model.viewport / this.model.rowHeight)
          : e.deltaY / this.model.rowHeight;
    this.model.setFirstRow(this.model.firstRow + rows);
    this.draw();
  }

  private onKey(e: KeyboardEvent): void {
    const pageRows = Math.max(1, Math.floor(this.model.viewport / this.model.rowHeight) - 1);
    const moves: Record<string, number> = {
      ArrowDown: 1,
      ArrowUp: -1,
      PageDown: pageRows,
      PageUp: -pageRows,
      Home: -Infinity,
      End: Infinity,
    };
    if (e.key in moves) {
      e.preventDefault();
      const d = moves[e.key]!;
      const delta = d === Infinity ? this.model.total : d === -Infinity ? -this.model.total : d;
      const idx = this.model.moveSelection(delta);
      this.draw();
      if (idx !== null) this.opts.onSelect?.(idx, this.model.item(idx));
    } else if (e.key === 'Enter' && this.model.selected !== null) {
      e.preventDefault();
      this.opts.onActivate?.(this.model.selected, this.model.item(this.model.selected));
    }
  }

  /** Selects a row (click or programmatic); `quiet` skips onSelect (the store already knows). */
  select(index: number, quiet: boolean, center = false): void {
    this.model.selected = index;
    this.reveal(index, center);
    this.draw();
    if (!quiet) this.opts.onSelect?.(index, this.model.item(index));
  }

  scrollToIndex(index: number, center = true): void {
    this.reveal(index, center);
    this.draw();
  }

  private reveal(index: number, center: boolean): void {
    this.model.reveal(index, center);
    this.pendingReveal = this.model.viewport ? null : { index, center };
  }

  /** Rows of a new data set (filters, run): back to the top. Its owner fetches its first page unasked: a new data
   * set starts at row 0 whatever the viewport, so that request need not wait for a layout or the scroll debounce. */
  reset(source: RowSource<T>): void {
    this.pendingReveal = null;
    this.model.reset();
    this.model.setSource(source);
    this.draw();
  }

  /** More rows of the same data set arrived (or it grew): drawn in the next frame, keeping scroll and selection. */
  setSource(source: RowSource<T>): void {
    this.model.setSource(source);
    this.schedule();
  }

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      inFrame(() => this.draw());
    });
  }

  draw(): void {
    // No layout is read here (see knownTop). Until the first resize report there is no height to fill (that report
    // comes after the browser's own layout and before its paint, and draws again). The panel hears of every draw
    // all the same: its counts and its first-paint bookkeeping must not wait on a list that has no room yet.
    if (this.model.viewport) this.drawRows();
    this.opts.onDraw?.(this);
  }

  private drawRows(): void {
    const m = this.model;
    const spacer = m.spacerHeight();
    // The layer is sticky and one viewport tall; the spacer supplies the rest of the scroll height.
    this.layer.style.height = `${m.viewport}px`;
    this.spacer.style.height = `${Math.max(0, spacer - m.viewport)}px`;
    m.setFirstRow(m.firstRow);
    const top = m.scrollTop();
    if (Math.abs(this.knownTop - top) >= 1) {
      // The scroll event this causes is recognized by expectedTop; one the browser clamped differently arrives as
      // a user scroll and is followed like one.
      this.expectedTop = this.knownTop = Math.round(top);
      this.scroller.scrollTop = top;
    }
    const { begin, end, offset } = m.visible();
    const keep = new Set<number>();
    for (let i = begin; i < end; i++) {
      keep.add(i);
      let el = this.rowEls.get(i);
      if (!el) {
        el = document.createElement('div');
        el.className = 'vl-row';
        el.dataset.index = String(i);
        this.layer.appendChild(el);
        this.rowEls.set(i, el);
      }
      const item = m.item(i);
      el.style.transform = `translateY(${offset + (i - begin) * m.rowHeight}px)`;
      el.style.height = `${m.rowHeight}px`;
      // Base classes first: renderRow may add its own (e.g. the column grid), rowClass last.
      el.className = 'vl-row' + (m.selected === i ? ' selected' : '') + (item === undefined ? ' pending' : '');
      this.opts.renderRow(el, item, i);
      const extra = this.opts.rowClass?.(i, item);
      if (extra) el.classList.add(extra);
      el.setAttribute('aria-selected', m.selected === i ? 'true' : 'false');
    }
    for (const [i, el] of this.rowEls) {
      if (!keep.has(i)) {
        el.remove();
        this.rowEls.delete(i);
      }
    }
    // Fetch once scrolling pauses: dragging the scrollbar across 10 M rows must not request every page it passes.
    if (this.fetchTimer !== null) clearTimeout(this.fetchTimer);
    this.fetchTimer = setTimeout(() => {
      this.fetchTimer = null;
      m.ensureVisible();
    }, 40);
  }

  /** Number of row elements in the DOM (tests: only visible rows exist). */
  domRowCount(): number {
    return this.rowEls.size;
  }
}

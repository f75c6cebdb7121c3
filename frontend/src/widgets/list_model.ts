/**
 * The virtual list's state without the DOM: total, first visible row, selection, and a page cache fed by an async
 * data source. Kept apart from `virtual_list.ts` so the 10 M-row behaviour is unit-tested in node.
 */
import { firstRowAt, firstRowToReveal, maxFirstRow, pagesFor, scrollTopFor, spacerHeight, visibleRange, type Geometry } from './scroll_math.ts';

export interface Page<T> {
  items: T[];
  /** Total rows as the source knows it now (lets a live list grow or shrink). */
  total: number;
}

export type FetchPage<T> = (begin: number, end: number) => Promise<Page<T>>;

const MAX_CACHED_PAGES = 64;

export class ListModel<T> {
  total = 0;
  /** Fractional row at the top of the viewport. */
  firstRow = 0;
  selected: number | null = null;
  viewport = 0;
  /** Bumped by reset(): responses for an older generation are dropped. */
  private generation = 0;
  private pages = new Map<number, T[]>();
  private inflight = new Set<number>();
  private failedPages = new Map<number, string>();
  /** Pages kept on screen while their refetch (after invalidate) is in flight, so a live update never flickers. */
  private stale = new Set<number>();
  lastError: string | null = null;
  /** True once the first page (or an empty answer) has arrived since the last reset. */
  loadedOnce = false;

  constructor(
    readonly rowHeight: number,
    private fetchPage: FetchPage<T>,
    readonly pageSize = 200,
    private readonly onChange: () => void = () => {},
  ) {
    if (pageSize > 1000) throw new Error('pages are capped at 1000 rows by the server');
  }

  geometry(): Geometry {
    return { total: this.total, rowHeight: this.rowHeight, viewport: this.viewport };
  }

  spacerHeight(): number {
    return spacerHeight(this.geometry());
  }

  scrollTop(): number {
    return scrollTopFor(this.firstRow, this.geometry());
  }

  setScrollTop(top: number): void {
    this.firstRow = firstRowAt(top, this.geometry());
  }

  setFirstRow(row: number): void {
    this.firstRow = Math.min(Math.max(0, row), maxFirstRow(this.geometry()));
  }

  visible(): { begin: number; end: number; offset: number } {
    return visibleRange(this.firstRow, this.geometry());
  }

  reveal(index: number, center = false): void {
    this.firstRow = firstRowToReveal(index, this.firstRow, this.geometry(), center);
  }

  item(index: number): T | undefined {
    const page = this.pages.get(Math.floor(index / this.pageSize));
    return page?.[index % this.pageSize];
  }

  pageError(index: number): string | undefined {
    return this.failedPages.get(Math.floor(index / this.pageSize));
  }

  /** Drops everything (new filters or run): scroll back to the top and refetch. */
  reset(fetchPage?: FetchPage<T>): void {
    if (fetchPage) this.fetchPage = fetchPage;
    this.generation++;
    this.pages.clear();
    this.stale.clear();
    this.inflight.clear();
    this.failedPages.clear();
    this.firstRow = 0;
    this.selected = null;
    this.loadedOnce = false;
  }

  /** Data may have changed (live dump): keep position and selection, refetch what is visible. */
  invalidate(): void {
    this.generation++;
    this.stale = new Set(this.pages.keys());
    this.inflight.clear();
    this.failedPages.clear();
  }

  setTotal(total: number): void {
    this.total = Math.max(0, total);
    this.firstRow = Math.min(this.firstRow, maxFirstRow(this.geometry()));
  }

  /** Starts fetches for visible pages not yet cached; resolves when they have arrived. */
  ensureVisible(): Promise<void> {
    const { begin, end } = this.visible();
    // With an unknown total (0 before the first answer) still ask for page 0: its answer carries the total.
    const pages = this.total === 0 ? [0] : pagesFor(begin, end, this.pageSize);
    return Promise.all(pages.map((p) => this.load(p))).then(() => undefined);
  }

  private async load(page: number): Promise<void> {
    if ((this.pages.has(page) && !this.stale.has(page)) || this.inflight.has(page) || this.failedPages.has(page)) return;
    const gen = this.generation;
    this.inflight.add(page);
    try {
      const begin = page * this.pageSize;
      const resp = await this.fetchPage(begin, begin + this.pageSize);
      if (gen !== this.generation) return;
      this.inflight.delete(page);
      this.failedPages.delete(page);
      this.pages.set(page, resp.items);
      this.stale.delete(page);
      this.lastError = null;
      this.loadedOnce = true;
      if (this.pages.size > MAX_CACHED_PAGES) this.evict();
      if (resp.total !== this.total) this.setTotal(resp.total);
    } catch (e) {
      if (gen !== this.generation) return;
      this.inflight.delete(page);
      this.lastError = e instanceof Error ? e.message : String(e);
      this.failedPages.set(page, this.lastError);
      this.loadedOnce = true;
    }
    this.onChange();
  }

  /** Forgets the cached pages farthest from the viewport. */
  private evict(): void {
    const here = Math.floor(this.firstRow / this.pageSize);
    const sorted = [...this.pages.keys()].sort((a, b) => Math.abs(b - here) - Math.abs(a - here));
    for (const p of sorted.slice(0, this.pages.size - MAX_CACHED_PAGES)) {
      this.pages.delete(p);
      this.stale.delete(p);
    }
  }

  cachedPages(): number {
    return this.pages.size;
  }

  /** Moves the selection by `delta` rows (keyboard), clamped, and reveals it. Returns the new index. */
  moveSelection(delta: number): number | null {
    if (this.total === 0) return null;
    const from = this.selected ?? (delta > 0 ? -1 : this.total);
    const next = Math.min(Math.max(from + delta, 0), this.total - 1);
    this.selected = next;
    this.reveal(next);
    return next;
  }
}

/**
 * The rows of one paged list's data set (a run's alerts of one type, a run's graph execution traces under some
 * filters) as far as they have been fetched: an immutable snapshot kept in the store. Each arrival makes a new
 * snapshot (a copy of a map of at most MAX_CACHED_PAGES page references, never of rows), so subscribers see page
 * arrivals by identity like any other state, and a 10 M-row list holds no more than the pages near its viewport.
 */

/** Pages kept per list: beyond this the pages farthest from the last request are dropped. */
export const MAX_CACHED_PAGES = 64;

export interface PagedRowsInit {
  /** Names the data set (run, type or filters): a different key is a different list, never mixed with this one. */
  key: string;
  pageSize: number;
}

export class PagedRows<T> {
  private constructor(
    readonly key: string,
    readonly pageSize: number,
    /** Rows in the data set as the server last said (0 until the first answer). */
    readonly total: number,
    /** Rows before filters (the unfiltered count a filtered list is "N of"); equals total when unfiltered. */
    readonly unfilteredTotal: number,
    /** True once the first page (or a failure) has arrived: before that, total 0 means "not known yet". */
    readonly loaded: boolean,
    /** The last failure's message, cleared by the next page that arrives. */
    readonly error: string | null,
    /** Bumped by invalidated(): an answer to a request made before is dropped (the data set may have grown). */
    readonly version: number,
    private readonly pages: ReadonlyMap<number, readonly T[]>,
    private readonly failed: ReadonlyMap<number, string>,
    /** Pages shown while their refetch is in flight (after invalidated), so a live update never flickers. */
    private readonly stale: ReadonlySet<number>,
  ) {}

  static empty<T>(init: PagedRowsInit): PagedRows<T> {
    return new PagedRows<T>(init.key, init.pageSize, 0, 0, false, null, 0, new Map(), new Map(), new Set());
  }

  item(index: number): T | undefined {
    return this.pages.get(Math.floor(index / this.pageSize))?.[index % this.pageSize];
  }

  pageError(index: number): string | undefined {
    return this.failed.get(Math.floor(index / this.pageSize));
  }

  cachedPages(): number {
    return this.pages.size;
  }

  /** Pages covering rows [begin, end) that need a fetch: not cached (or stale) and not failed. With no rows known
   * (before the first answer, or an empty data set that may have grown since) that is page 0: its answer carries
   * the total. */
  pagesToFetch(begin: number, end: number): number[] {
    const first = Math.floor(Math.max(0, begin) / this.pageSize);
    const last = Math.ceil(Math.min(end, this.total) / this.pageSize);
    const covering = this.total === 0 ? [0] : Array.from({ length: Math.max(0, last - first) }, (_, k) => first + k);
    return covering.filter((p) => !(this.pages.has(p) && !this.stale.has(p)) && !this.failed.has(p));
  }

  /** The list position of the first cached row matching `match`, or null: a focus from outside the list finds its
   * row here (a filtered list's positions are not the rows' global indices). */
  positionOf(match: (row: T) => boolean): number | null {
    for (const page of [...this.pages.keys()].sort((a, b) => a - b)) {
      const rows = this.pages.get(page)!;
      const at = rows.findIndex(match);
      if (at >= 0) return page * this.pageSize + at;
    }
    return null;
  }

  /** A page arrived; `near` is the page the list last asked around (eviction keeps the pages closest to it). */
  withPage(page: number, rows: readonly T[], total: number, unfilteredTotal: number, near: number): PagedRows<T> {
    const pages = new Map(this.pages).set(page, rows);
    if (pages.size > MAX_CACHED_PAGES) {
      const farthestFirst = [...pages.keys()].sort((a, b) => Math.abs(b - near) - Math.abs(a - near));
      for (const p of farthestFirst.slice(0, pages.size - MAX_CACHED_PAGES)) pages.delete(p);
    }
    const failed = new Map(this.failed);
    failed.delete(page);
    const stale = new Set(this.stale);
    stale.delete(page);
    return new PagedRows(
      this.key,
      this.pageSize,
      Math.max(0, total),
      unfilteredTotal,
      true,
      null,
      this.version,
      pages,
      failed,
      stale,
    );
  }

  withFailure(page: number, message: string): PagedRows<T> {
    const failed = new Map(this.failed).set(page, message);
    const { key, pageSize, total, unfilteredTotal, version, pages, stale } = this;
    return new PagedRows(key, pageSize, total, unfilteredTotal, true, message, version, pages, failed, stale);
  }

  /** The data set may have changed (a live dump grew): keep every row on screen, refetch each page when asked. */
  invalidated(): PagedRows<T> {
    const { key, pageSize, total, unfilteredTotal, loaded, error, pages } = this;
    const stale = new Set(pages.keys());
    return new PagedRows(
      key,
      pageSize,
      total,
      unfilteredTotal,
      loaded,
      error,
      this.version + 1,
      pages,
      new Map(),
      stale,
    );
  }
}

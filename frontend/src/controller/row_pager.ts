/**
 * Fetches the pages of one paged list into the store. The controller opens a data set (a key and the function that
 * fetches its pages through the API client); the list asks for the rows it shows (`request`), through the
 * controller; each answer becomes a new PagedRows snapshot in the store, which the list draws from.
 */
import { PAGE_CAP } from '../api/client.ts';
import { PagedRows } from '../store/paged_rows.ts';
import type { State, Store } from '../store/store.ts';
import { errorText } from '../store/store.ts';

export interface FetchedPage<T> {
  rows: T[];
  total: number;
  /** Rows before filters; absent for a list that has none. */
  unfilteredTotal?: number;
}

export type PageFetch<T> = (begin: number, end: number) => Promise<FetchedPage<T>>;

/** Where the list's snapshot lives in the state. */
export interface RowsSlot<T> {
  read(s: State): PagedRows<T>;
  /** The patch that stores `rows`; `arrived`: the page that just came (state derived from rows, e.g. op types). */
  write(rows: PagedRows<T>, arrived?: readonly T[]): Partial<State>;
}

export class RowPager<T> {
  private fetchPage: PageFetch<T> | null = null;
  /** `key#version#page` of requests in flight, so a page the list asks for twice is fetched once. */
  private inflight = new Set<string>();
  /** The page the list last asked around: eviction keeps the pages nearest to it. */
  private near = 0;

  constructor(
    private readonly store: Store,
    private readonly slot: RowsSlot<T>,
    readonly pageSize: number,
  ) {
    if (pageSize > PAGE_CAP) throw new Error(`pages are capped at ${PAGE_CAP} rows by the server`);
  }

  /**
   * Makes the snapshot of a new data set (for the caller to put in the store with the change that caused it) and
   * starts fetching its first page: a new data set shows row 0 first, whatever the viewport. `fetchPage` null: there
   * is nothing to list (no run, or no type chosen).
   */
  open(key: string, fetchPage: PageFetch<T> | null): PagedRows<T> {
    this.fetchPage = fetchPage;
    this.inflight.clear();
    this.near = 0;
    const rows = PagedRows.empty<T>({ key, pageSize: this.pageSize });
    if (fetchPage) queueMicrotask(() => this.request(0, this.pageSize));
    return rows;
  }

  /** The list shows rows [begin, end): fetch the pages it lacks. */
  request(begin: number, end: number): void {
    const rows = this.slot.read(this.store.state);
    if (!this.fetchPage) return;
    this.near = Math.floor(begin / this.pageSize);
    for (const page of rows.pagesToFetch(begin, end)) void this.load(rows, page);
  }

  /** The data set may have grown (live dump): rows stay on screen until their page is fetched again. */
  invalidate(): void {
    const rows = this.slot.read(this.store.state);
    this.inflight.clear();
    this.store.set(this.slot.write(rows.invalidated()));
  }

  private async load(asked: PagedRows<T>, page: number): Promise<void> {
    const id = `${asked.key}#${asked.version}#${page}`;
    if (this.inflight.has(id) || !this.fetchPage) return;
    this.inflight.add(id);
    const begin = page * this.pageSize;
    let got: FetchedPage<T> | null = null;
    let failure = '';
    try {
      got = await this.fetchPage(begin, begin + this.pageSize);
    } catch (e) {
      failure = errorText(e);
    }
    const now = this.slot.read(this.store.state);
    // An answer for another data set, or for this one before it was invalidated, is dropped.
    if (!this.inflight.delete(id) || now.key !== asked.key || now.version !== asked.version) return;
    if (!got) return this.store.set(this.slot.write(now.withFailure(page, failure)));
    const rows = now.withPage(page, got.rows, got.total, got.unfilteredTotal ?? got.total, this.near);
    this.store.set(this.slot.write(rows, got.rows));
  }
}

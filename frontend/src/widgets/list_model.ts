/**
 * The virtual list's state without the DOM: first visible row, selection and viewport height over rows it does not
 * own. The rows come from a RowSource (fetched pages, kept by whoever fetches them); the model only says which rows
 * it shows (`requestRows`). Kept apart from `virtual_list.ts` so the 10 M-row behaviour is unit-tested in node.
 */
import {
  firstRowAt,
  firstRowToReveal,
  maxFirstRow,
  scrollTopFor,
  spacerHeight,
  visibleRange,
  type Geometry,
} from './scroll_math.ts';

/** The rows a list shows, as far as they have been fetched. */
export interface RowSource<T> {
  /** Rows in the data set (0 until the first answer). */
  readonly total: number;
  /** True once the first page (or a failure) has arrived. */
  readonly loaded: boolean;
  /** The last failure's message, or null. */
  readonly error: string | null;
  /** The row, or undefined while its page is not fetched. */
  item(index: number): T | undefined;
  /** Why the row's page could not be fetched, if it could not. */
  pageError(index: number): string | undefined;
}

/** Asks for rows [begin, end) to be fetched; they arrive as a new RowSource (`setSource`). */
export type RequestRows = (begin: number, end: number) => void;

const NO_ROWS: RowSource<never> = {
  total: 0,
  loaded: false,
  error: null,
  item: () => undefined,
  pageError: () => undefined,
};

export class ListModel<T> {
  /** Fractional row at the top of the viewport. */
  firstRow = 0;
  selected: number | null = null;
  viewport = 0;
  private source: RowSource<T> = NO_ROWS;

  constructor(
    readonly rowHeight: number,
    private readonly requestRows: RequestRows,
  ) {}

  get total(): number {
    return this.source.total;
  }

  /** True once the first page (or an empty answer) has arrived for the current rows. */
  get loadedOnce(): boolean {
    return this.source.loaded;
  }

  get lastError(): string | null {
    return this.source.error;
  }

  /** New rows of the same data set (a page arrived) or of a new one (after reset()). */
  setSource(source: RowSource<T>): void {
    this.source = source;
    this.firstRow = Math.min(this.firstRow, maxFirstRow(this.geometry()));
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
    return this.source.item(index);
  }

  pageError(index: number): string | undefined {
    return this.source.pageError(index);
  }

  /** A new data set (filters, run): back to the top, nothing selected. */
  reset(): void {
    this.firstRow = 0;
    this.selected = null;
  }

  /** Asks for the rows in view (the source knows which of them it lacks). */
  ensureVisible(): void {
    const { begin, end } = this.visible();
    this.requestRows(begin, end);
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

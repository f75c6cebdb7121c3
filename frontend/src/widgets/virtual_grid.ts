/**
 * Virtual grid: rows x columns of fixed-size cells with sticky row and column headers; only the cells in view are in
 * the DOM (a pool reused on every draw), and the cells in view are reported (once scrolling pauses) so the owner
 * fetches their values. Past the browser's maximum element size the scroll position is scaled (like virtual_list):
 * the spacer is capped and its scroll offset maps linearly onto the first row/column.
 */
export interface VirtualGridOptions {
  cellWidth: number;
  cellHeight: number;
  headerWidth: number;
  /** Fills a cell's element (textContent only) and returns its extra class (e.g. "v-nan"), or ''. */
  renderCell(el: HTMLElement, row: number, col: number): string;
  /** Cells [r0, r1) x [c0, c1) are in view. */
  cellsInView(r0: number, r1: number, c0: number, c1: number): void;
  onCellClick?(row: number, col: number): void;
  testId?: string;
}

const MAX_PX = 4_000_000;

export class VirtualGrid {
  readonly element: HTMLDivElement;
  private readonly scroller: HTMLDivElement;
  private readonly layer: HTMLDivElement;
  private readonly spacer: HTMLDivElement;
  private rows = 0;
  private cols = 0;
  private width = 0;
  private height = 0;
  private left = 0;
  private top = 0;
  private pool: HTMLDivElement[] = [];
  private focus: [number, number] | null = null;
  /** A reveal asked for before the grid had a size: done again when it gets one. */
  private pendingReveal: [number, number] | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private frame = 0;

  constructor(private readonly opts: VirtualGridOptions) {
    this.element = document.createElement('div');
    this.element.className = 'vg';
    if (opts.testId) this.element.dataset.testid = opts.testId;
    this.scroller = document.createElement('div');
    this.scroller.className = 'vg-scroller';
    this.layer = document.createElement('div');
    this.layer.className = 'vg-layer';
    this.spacer = document.createElement('div');
    this.spacer.className = 'vg-spacer';
    this.scroller.append(this.layer, this.spacer);
    this.element.append(this.scroller);
    this.scroller.addEventListener('scroll', () => {
      this.left = this.scroller.scrollLeft;
      this.top = this.scroller.scrollTop;
      this.schedule();
    });
    this.layer.addEventListener('click', (e) => {
      const cell = (e.target as HTMLElement).closest<HTMLElement>('.vg-cell');
      if (cell?.dataset.r && cell.dataset.c) this.opts.onCellClick?.(Number(cell.dataset.r), Number(cell.dataset.c));
    });
    new ResizeObserver((entries) => {
      const box = entries[0]?.contentRect;
      if (!box) return;
      this.width = box.width;
      this.height = box.height;
      this.left = this.scroller.scrollLeft;
      this.top = this.scroller.scrollTop;
      if (this.pendingReveal && this.height > 0) this.reveal(...this.pendingReveal);
      this.schedule();
    }).observe(this.scroller);
  }

  setSize(rows: number, cols: number): void {
    if (rows === this.rows && cols === this.cols) return;
    this.rows = rows;
    this.cols = cols;
    this.spacer.style.width = `${Math.min(MAX_PX, this.opts.headerWidth + cols * this.opts.cellWidth)}px`;
    this.spacer.style.height = `${Math.min(MAX_PX, this.opts.cellHeight * (rows + 1))}px`;
    this.schedule();
  }

  setFocus(cell: [number, number] | null): void {
    this.focus = cell;
    this.draw();
  }

  /** Scrolls so that cell (row, col) is in the middle of the view. */
  reveal(row: number, col: number): void {
    this.pendingReveal = this.height > 0 ? null : [row, col];
    const vr = this.visibleRows();
    const vc = this.visibleCols();
    this.top = this.offsetOf(Math.max(0, row - vr / 2 + 0.5), this.rows, vr, this.scrollMax('y'));
    this.left = this.offsetOf(Math.max(0, col - vc / 2 + 0.5), this.cols, vc, this.scrollMax('x'));
    this.scroller.scrollTop = this.top;
    this.scroller.scrollLeft = this.left;
    // the browser clamps what it cannot scroll to: draw where it really is (a read, once per reveal)
    this.top = this.scroller.scrollTop;
    this.left = this.scroller.scrollLeft;
    this.draw();
  }

  private visibleRows(): number {
    return Math.max(1, Math.floor(this.height / this.opts.cellHeight) - 1);
  }

  private visibleCols(): number {
    return Math.max(1, Math.floor((this.width - this.opts.headerWidth) / this.opts.cellWidth));
  }

  private scrollMax(axis: 'x' | 'y'): number {
    const full =
      axis === 'y' ? this.opts.cellHeight * (this.rows + 1) : this.opts.headerWidth + this.cols * this.opts.cellWidth;
    return Math.max(0, Math.min(MAX_PX, full) - (axis === 'y' ? this.height : this.width));
  }

  /** First row (column) shown at scroll offset `px`: exact below MAX_PX, scaled above. */
  private firstAt(px: number, n: number, visible: number, max: number): number {
    const last = Math.max(0, n - visible);
    if (max <= 0) return 0;
    return Math.min(last, Math.floor((px / max) * last));
  }

  private offsetOf(first: number, n: number, visible: number, max: number): number {
    const last = Math.max(0, n - visible);
    return last <= 0 ? 0 : Math.min(max, (Math.min(first, last) / last) * max);
  }

  private schedule(): void {
    if (!this.frame) this.frame = requestAnimationFrame(() => this.draw());
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.report(), 80);
  }

  private range(): [number, number, number, number] {
    const vr = this.visibleRows();
    const vc = this.visibleCols();
    const r0 = this.firstAt(this.top, this.rows, vr, this.scrollMax('y'));
    const c0 = this.firstAt(this.left, this.cols, vc, this.scrollMax('x'));
    return [r0, Math.min(this.rows, r0 + vr + 1), c0, Math.min(this.cols, c0 + vc + 1)];
  }

  private report(): void {
    this.timer = null;
    if (!this.rows || !this.cols || !this.height) return;
    const [r0, r1, c0, c1] = this.range();
    this.opts.cellsInView(r0, r1, c0, c1);
  }

  /** Redraws the cells in view (call after their values changed). */
  draw(): void {
    this.frame = 0;
    const { cellWidth: w, cellHeight: h, headerWidth: hw } = this.opts;
    this.layer.style.transform = `translate(${this.left}px, ${this.top}px)`;
    this.layer.style.width = `${this.width}px`;
    this.layer.style.height = `${this.height}px`;
    if (!this.rows || !this.cols) return this.fill(0);
    const [r0, r1, c0, c1] = this.range();
    let n = 0;
    const put = (text: string, cls: string, x: number, y: number, r?: number, c?: number) => {
      const cell = this.cell(n++);
      cell.className = cls;
      cell.textContent = text;
      cell.style.transform = `translate(${x}px, ${y}px)`;
      if (r === undefined || c === undefined) {
        delete cell.dataset.r;
        delete cell.dataset.c;
        return cell;
      }
      cell.dataset.r = String(r);
      cell.dataset.c = String(c);
      return cell;
    };
    for (let c = c0; c < c1; c++) put(String(c), 'vg-head vg-colhead', hw + (c - c0) * w, 0);
    for (let r = r0; r < r1; r++) {
      const y = h + (r - r0) * h;
      put(String(r), 'vg-head vg-rowhead', 0, y);
      for (let c = c0; c < c1; c++) {
        const cell = put('', 'vg-cell', hw + (c - c0) * w, y, r, c);
        const extra = this.opts.renderCell(cell, r, c);
        if (extra) cell.classList.add(extra);
        if (this.focus && this.focus[0] === r && this.focus[1] === c) cell.classList.add('vg-focus');
      }
    }
    this.fill(n);
  }

  private cell(i: number): HTMLDivElement {
    let cell = this.pool[i];
    if (!cell) {
      cell = document.createElement('div');
      this.pool.push(cell);
      this.layer.append(cell);
    }
    cell.hidden = false;
    return cell;
  }

  private fill(used: number): void {
    for (let i = used; i < this.pool.length; i++) this.pool[i]!.hidden = true;
  }
}

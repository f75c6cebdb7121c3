/**
 * Tensor Values: a pane over the dashboard (Esc or × closes it) showing one tensor — its op, dtype and shape; for
 * FULL_TENSOR values a virtual grid of the chosen 2-D plane (NaN, ±∞ and zero coloured), the dims picker, the
 * heatmap, histogram, stats and non-finite positions, a .npy download, and the op's inputs side by side; for other
 * modes what they carry and how to record values. Opened from an alert, a trace row, an execution's output or the
 * root cause card (Controller.tensors.open). It draws `state.tensorView` and calls the loader's intents.
 */
import type { Controller } from '../../controller/controller.ts';
import type { State, TensorView } from '../../store/store.ts';
import { indexOf, planeSize, valueAt } from '../../store/tensor_math.ts';
import { el } from '../../widgets/panel.ts';
import { renderHealth } from '../../widgets/health.ts';
import { VirtualGrid } from '../../widgets/virtual_grid.ts';
import { renderDims } from './dims.ts';
import { formatValue, shapeText, valueClass } from './format.ts';
import { CompareValuesView } from './compare_values_view.ts';
import { renderInputs } from './inputs.ts';
import { capsuleArrayHead } from './capsule_array_head.ts';
import { renderHeatmap, renderHistogram, renderPositions, renderStats } from './side.ts';

export class TensorValuesPanel {
  readonly element = el('section', 'tv-pane');
  private readonly title = el('div', 'tv-title');
  private readonly dims = el('div', 'tv-dims-slot');
  private readonly download = el('a', 'tv-download', 'download .npy');
  private readonly note = el('div', 'tv-note');
  private readonly side = el('div', 'tv-side');
  private readonly inputs = el('div', 'tv-inputs-slot');
  private readonly gridStatus = el('div', 'tv-grid-status muted');
  private readonly grid: VirtualGrid;

  constructor(private readonly ctl: Controller) {
    this.element.dataset.testid = 'tensor-values';
    this.element.hidden = true;
    this.element.tabIndex = -1;
    this.grid = new VirtualGrid({
      cellWidth: 84,
      cellHeight: 20,
      headerWidth: 48,
      testId: 'tv-grid',
      renderCell: (cell, r, c) => this.renderCell(cell, r, c),
      cellsInView: (r0, r1, c0, c1) => ctl.tensors.cellsInView(r0, r1, c0, c1),
    });
    const close = el('button', 'tv-close', '×');
    close.title = 'Close (Esc)';
    close.dataset.testid = 'tv-close';
    close.addEventListener('click', () => ctl.tensors.close());
    this.download.dataset.testid = 'tv-download';
    this.download.setAttribute('download', '');
    const head = el('header', 'tv-head');
    head.append(this.title, this.dims, this.download, close);
    const main = el('div', 'tv-main');
    main.append(this.gridStatus, this.grid.element);
    const body = el('div', 'tv-body');
    body.append(main, this.side);
    this.element.append(head, this.note, body, new CompareValuesView(ctl).element, this.inputs);
    ctl.store.subscribe((s, prev) => this.update(s, prev));
  }

  private renderCell(cell: HTMLElement, r: number, c: number): string {
    const v = this.ctl.store.state.tensorView;
    const slice = v?.cells.data?.slice;
    if (!v?.plane || !slice) {
      cell.textContent = '…';
      delete cell.dataset.index;
      return '';
    }
    const value = valueAt(slice, v.plane, v.window, r, c);
    cell.textContent = formatValue(value);
    cell.dataset.index = indexOf(v.plane, r, c).join(',');
    cell.title = `[${cell.dataset.index}] ${cell.textContent}`;
    return valueClass(value);
  }

  private update(s: State, prev: State): void {
    const v = s.tensorView;
    const was = prev.tensorView;
    if (v === was) return;
    this.element.hidden = v === null;
    if (!v) return;
    if (!was) this.element.focus();
    if (!was || v.summary !== was.summary) this.renderHead(v);
    if (!was || v.summary !== was.summary || v.plane !== was.plane) this.renderDims(v);
    if (!was || v.summary !== was.summary || v.plane !== was.plane || v.heat !== was.heat) this.renderSide(v);
    this.inputs.hidden = !!v.target.capsule; // a capsule array has no op, so no inputs
    if (!was || v.inputs !== was.inputs || v.inputViews !== was.inputViews) {
      this.inputs.replaceChildren(renderInputs(v.inputViews, v.inputs.status, (t) => this.ctl.tensors.open(t)));
    }
    this.renderGrid(v, was);
  }

  private renderHead(v: TensorView): void {
    const r = v.summary.data;
    const t = r?.tensor;
    const what = t ? (t.op_name ?? t.op_type ?? '?') : '';
    const where = `${v.target.source === 'graph' ? 'trace' : 'execution'} #${v.target.index}`;
    this.title.replaceChildren(
      el('b', 'tv-op', what || 'Tensor values'),
      el('span', 'muted', ` ${t?.op_type ?? ''} · ${where}${t ? ` · output ${t.output}` : ''}`),
      el('span', 'tv-shape', r ? ` ${r.dtype ?? '?'} ${shapeText(r.shape)}` : ''),
      el('span', 'muted', t ? ` · ${t.tensor_debug_mode}` : ''),
    );
    if (v.target.capsule) this.title.replaceChildren(...capsuleArrayHead(v.target.capsule, r ?? null));
    this.download.href = v.npyUrl;
    this.download.hidden = !r?.has_values || !v.npyUrl;
    this.note.replaceChildren();
    if (v.summary.status === 'loading') this.note.append(el('span', 'muted', 'Loading…'));
    if (v.summary.error) this.note.append(el('span', 'tv-error', v.summary.error));
    if (r?.health) this.note.append(renderHealth(r.health), document.createTextNode(' '));
    if (r?.note) this.note.append(el('span', 'tv-note-text', r.note));
    this.note.hidden = !this.note.childNodes.length;
  }

  private renderDims(v: TensorView): void {
    const shape = v.summary.data?.shape;
    this.dims.replaceChildren();
    if (!v.plane || !shape) return;
    this.dims.append(
      renderDims(shape, v.plane, {
        axes: (r, c) => this.ctl.tensors.setAxes(r, c),
        fixed: (axis, value) => this.ctl.tensors.setFixed(axis, value),
      }),
    );
  }

  private renderSide(v: TensorView): void {
    const r = v.summary.data;
    this.side.replaceChildren();
    if (!r?.has_values || !v.plane) return;
    const heat = renderHeatmap(r, v.heat.data, v.plane, (row, col) =>
      this.ctl.tensors.focusPosition(indexOf(v.plane!, row, col)),
    );
    this.side.append(heat, renderHistogram(r), renderStats(r));
    this.side.append(renderPositions(r, (pos) => this.ctl.tensors.focusPosition(pos)));
  }

  private renderGrid(v: TensorView, was: TensorView | null): void {
    const shape = v.summary.data?.shape;
    const main = this.grid.element;
    main.hidden = !v.plane || !shape;
    if (!v.plane || !shape) return;
    const { rows, cols } = planeSize(shape, v.plane);
    this.grid.setSize(rows, cols);
    this.gridStatus.textContent = v.cells.error ?? (v.cells.status === 'loading' ? 'Loading values…' : '');
    const focus = v.focusCell;
    const onPlane =
      focus && focus.every((x, k) => k === v.plane!.rowAxis || k === v.plane!.colAxis || x === v.plane!.fixed[k]);
    const cell: [number, number] | null =
      focus && onPlane
        ? [
            v.plane.rowAxis === null ? 0 : focus[v.plane.rowAxis]!,
            v.plane.colAxis === null ? 0 : focus[v.plane.colAxis]!,
          ]
        : null;
    this.grid.setFocus(cell);
    if (v.reveal && v.reveal !== was?.reveal) this.grid.reveal(v.reveal.row, v.reveal.col);
    else if (v.cells !== was?.cells) this.grid.draw();
  }
}

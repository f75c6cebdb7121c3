/**
 * The Tensor Values view's data (part of the controller, like source_loader.ts): which tensor is open, which plane
 * of it is shown, and the answers of the `tensor` route for it — the summary (stats, histogram, non-finite
 * positions), the grid's window of values, the heatmap's strided sample — and its op's inputs, each with its own
 * summary and sample, side by side. Panels call these intents and draw `state.tensorView`.
 */
import { capsuleArrayNpyUrl, tensorNpyUrl, type Api } from '../api/client.ts';
import { targetOf, type TensorTarget } from '../api/requests.ts';
import type { TensorResponse } from '../api/wire.ts';
import { fetchCapsuleArray, samplePosition } from './capsule_array_loader.ts';
import { idle, loading, type InputView, type Store, type TensorView } from '../store/store.ts';
import { Latest, settle } from './latest.ts';
import {
  covers,
  defaultPlane,
  heatSpec,
  planeAt,
  windowAround,
  windowSpec,
  withAxes,
  WINDOW,
  type Plane,
  type Window,
} from '../store/tensor_math.ts';

const HEAT_BINS = 48;

export class TensorLoader {
  /** The tensor open: its answers are dropped once it closes or another opens. */
  private readonly latest = new Latest();
  private revealSeq = 0;

  constructor(
    private readonly store: Store,
    private readonly api: Api,
  ) {}

  private get view(): TensorView | null {
    return this.store.state.tensorView;
  }

  private patch(p: Partial<TensorView>): void {
    const v = this.view;
    if (v) this.store.set({ tensorView: { ...v, ...p } });
  }

  /** Opens the view on a tensor: its summary first, then the first window, the heatmap and the inputs. A capsule
   * array (target.capsule) needs no run and has no inputs. */
  open(target: TensorTarget): void {
    const run = this.store.state.run;
    if (run === null && !target.capsule) return;
    const live = this.latest.begin(this.stillShown(run));
    this.store.set({
      tensorView: {
        target,
        npyUrl: target.capsule ? capsuleArrayNpyUrl(target.capsule) : run === null ? '' : tensorNpyUrl(run, target),
        summary: loading(),
        plane: null,
        window: { r0: 0, c0: 0, rows: WINDOW, cols: WINDOW },
        cells: idle(),
        heat: idle(),
        focusCell: null,
        reveal: null,
        inputs: target.capsule ? idle() : loading(),
        inputViews: [],
      },
    });
    void this.loadSummary(run, target, live);
    if (run !== null && !target.capsule) void this.loadInputs(run, target, live);
  }

  /** The `tensor` route's answer for a dumped tensor, or the same shape for a capsule array. */
  private fetch(run: string | null, target: TensorTarget, slice?: string, bins?: number): Promise<TensorResponse> {
    if (target.capsule) return fetchCapsuleArray(this.api, target.capsule, slice, bins);
    return this.api.tensor(run ?? '', target, slice, bins);
  }

  close(): void {
    this.latest.drop();
    this.store.set({ tensorView: null });
  }

  /** While `run` is still the run shown and the view still open. */
  private stillShown(run: string | null): () => boolean {
    return () => run === this.store.state.run && this.view !== null;
  }

  private async loadSummary(run: string | null, target: TensorTarget, live: () => boolean): Promise<void> {
    await settle(this.fetch(run, target, undefined, HEAT_BINS), live, (summary) => {
      const data = summary.data;
      if (data === null) return this.patch({ summary });
      const plane = data.has_values && data.shape ? defaultPlane(data.shape) : null;
      this.patch({ summary, plane });
      if (plane) this.showPlane(plane, this.view!.window);
      const first = samplePosition(target.capsule, data) ?? data.nonfinite?.positions[0];
      if (first) this.focusPosition(first);
    });
  }

  private async loadInputs(run: string, target: TensorTarget, live: () => boolean): Promise<void> {
    await settle(this.api.tensorInputs(run, target), live, (inputs) => {
      if (inputs.data === null) return this.patch({ inputs });
      const views: InputView[] = inputs.data.inputs.map((i) => ({
        name: i.name,
        description: i.description,
        target: i.tensor ? targetOf(i.tensor) : null,
        values: i.tensor ? loading() : null,
      }));
      this.patch({ inputs, inputViews: views });
      views.forEach((v, k) => v.target && void this.loadInput(run, v.target, k, live));
    });
  }

  /** An input's summary with the heatmap sample of its default plane (one request). */
  private async loadInput(run: string, target: TensorTarget, k: number, live: () => boolean): Promise<void> {
    const answer = this.api.tensor(run, target, undefined, 16).then((summary) => {
      const shape = summary.shape;
      return summary.has_values && shape
        ? this.api.tensor(run, target, heatSpec(shape, defaultPlane(shape)), 16)
        : summary;
    });
    await settle(answer, live, (values) => {
      const views = [...this.view!.inputViews];
      views[k] = { ...views[k]!, values };
      this.patch({ inputViews: views });
    });
  }

  /** Shows another plane (axes or fixed indices changed): a new heatmap, and the grid's window of it. */
  private showPlane(plane: Plane, window: Window): void {
    this.patch({ plane, window });
    this.loadCells();
    this.loadHeat();
  }

  private shape(): number[] | null {
    return this.view?.summary.data?.shape ?? null;
  }

  private loadCells(): void {
    const v = this.view;
    const run = this.store.state.run;
    const shape = this.shape();
    if (!v || !v.plane || !shape || (run === null && !v.target.capsule)) return;
    const { target, plane, window } = v;
    const spec = windowSpec(shape, plane, window);
    const live = this.latest.current(() => this.stillShown(run)() && this.view!.window === window);
    this.patch({ cells: loading(v.cells) });
    void settle(this.fetch(run, target, spec, 1), live, (cells) => {
      if (cells.status === 'error' || this.view!.plane === plane) this.patch({ cells });
    });
  }

  private loadHeat(): void {
    const v = this.view;
    const run = this.store.state.run;
    const shape = this.shape();
    if (!v || !v.plane || !shape || (run === null && !v.target.capsule)) return;
    const { target, plane } = v;
    const live = this.latest.current(() => this.stillShown(run)() && this.view!.plane === plane);
    this.patch({ heat: loading(v.heat) });
    void settle(this.fetch(run, target, heatSpec(shape, plane), 1), live, (heat) => this.patch({ heat }));
  }

  /** Rows and columns to show as the grid (the other axes keep their indices). */
  setAxes(rowAxis: number, colAxis: number | null): void {
    const v = this.view;
    const shape = this.shape();
    if (!v?.plane || !shape) return;
    this.showPlane(withAxes(shape, v.plane, rowAxis, colAxis), { r0: 0, c0: 0, rows: WINDOW, cols: WINDOW });
  }

  /** Moves a fixed axis to `value` (clamped to the axis). */
  setFixed(axis: number, value: number): void {
    const v = this.view;
    const shape = this.shape();
    if (!v?.plane || !shape || axis < 0 || axis >= shape.length) return;
    const fixed = [...v.plane.fixed];
    fixed[axis] = Math.max(0, Math.min((shape[axis] ?? 1) - 1, Math.round(value)));
    this.showPlane({ ...v.plane, fixed }, v.window);
  }

  /** The grid shows cells [r0, r1) x [c0, c1): a new window when they leave the one loaded. */
  cellsInView(r0: number, r1: number, c0: number, c1: number): void {
    const v = this.view;
    const shape = this.shape();
    if (!v?.plane || !shape || covers(v.window, r0, r1, c0, c1)) return;
    this.patch({ window: windowAround(shape, v.plane, (r0 + r1) / 2, (c0 + c1) / 2) });
    this.loadCells();
  }

  /** Focuses the element at full index `pos`: its plane, a window around it, and the grid centred on it. */
  focusPosition(pos: number[]): void {
    const v = this.view;
    const shape = this.shape();
    if (!v?.plane || !shape || pos.length !== shape.length) return;
    const { plane, row, col } = planeAt(v.plane, pos);
    const window = windowAround(shape, plane, row, col);
    const samePlane = plane.fixed.every(
      (x, k) => k === plane.rowAxis || k === plane.colAxis || x === v.plane!.fixed[k],
    );
    const reveal = { row, col, seq: ++this.revealSeq };
    this.patch({ focusCell: [...pos], reveal, plane: samePlane ? v.plane : plane, window });
    this.loadCells();
    if (!samePlane) this.loadHeat();
  }
}

/**
 * Runs the drawn graph's layouts off the page's thread: one Web Worker (layout_worker.ts), made on the first
 * request. A newer request wins: an answer to an older one is dropped (its promise resolves to null), and a worker
 * still busy with a stale layout is terminated and replaced rather than waited for (a 300-node layout is ~1 s).
 * Only where no worker can be made (no Worker, its creation throws, or its script fails to load, e.g. a CSP
 * without worker-src) does dagre run on the page's thread, loaded lazily (layout.ts is its own chunk).
 */
import type { LayoutRequest, LayoutResult } from './layout.ts';

export type LayoutWhere = 'worker' | 'main';

export interface PlacedLayout {
  result: LayoutResult;
  where: LayoutWhere;
}

interface Pending {
  seq: number;
  request: LayoutRequest;
  resolve: (placed: PlacedLayout | null) => void;
  reject: (error: Error) => void;
}

export class LayoutClient {
  /** undefined: not tried yet; null: no worker here (the fallback runs). */
  private worker: Worker | null | undefined;
  private seq = 0;
  private pending: Pending | null = null;

  constructor(private readonly makeWorker: () => Worker = defaultWorker) {}

  /** The layout of `request`, or null when a newer request was made before it was done. */
  layout(request: LayoutRequest): Promise<PlacedLayout | null> {
    const seq = ++this.seq;
    const stale = this.pending;
    this.pending = null;
    stale?.resolve(null);
    return new Promise((resolve, reject) => {
      this.pending = { seq, request, resolve, reject };
      const worker = this.ensureWorker(stale !== null);
      if (worker) worker.postMessage({ seq, request });
      else void this.onMainThread(seq, request);
    });
  }

  /** The worker, replaced when it is busy with a stale layout (terminating is the only way to stop dagre). */
  private ensureWorker(busy: boolean): Worker | null {
    if (this.worker && busy) {
      this.worker.terminate();
      this.worker = undefined;
    }
    if (this.worker !== undefined) return this.worker;
    try {
      const worker = this.makeWorker();
      worker.onmessage = (e: MessageEvent<{ seq: number; result?: LayoutResult; error?: string }>) =>
        this.settle(e.data.seq, e.data.result ? { result: e.data.result, where: 'worker' } : new Error(e.data.error));
      // The script could not be loaded or run (CSP, a missing chunk): no worker here; the request in flight runs
      // on the page's thread instead.
      worker.onerror = (e) => {
        e.preventDefault();
        if (this.worker === worker) this.giveUpWorker();
      };
      this.worker = worker;
    } catch {
      this.worker = null;
    }
    return this.worker;
  }

  private giveUpWorker(): void {
    this.worker?.terminate();
    this.worker = null;
    const p = this.pending;
    if (p) void this.onMainThread(p.seq, p.request);
  }

  private async onMainThread(seq: number, request: LayoutRequest): Promise<void> {
    const { computeLayout } = await import(/* webpackChunkName: "graph-layout-main" */ './layout.ts');
    if (this.pending?.seq !== seq) return;
    let placed: PlacedLayout | Error;
    try {
      placed = { result: computeLayout(request), where: 'main' };
    } catch (err) {
      placed = err instanceof Error ? err : new Error(String(err));
    }
    this.settle(seq, placed);
  }

  private settle(seq: number, placed: PlacedLayout | Error): void {
    const p = this.pending;
    if (!p || p.seq !== seq) return; // an answer to a request a newer one replaced
    this.pending = null;
    if (placed instanceof Error) p.reject(placed);
    else p.resolve(placed);
  }

  /** Stops the worker (the panel's drawing is gone). */
  dispose(): void {
    this.pending?.resolve(null);
    this.pending = null;
    this.worker?.terminate();
    this.worker = undefined;
  }
}

function defaultWorker(): Worker {
  if (typeof Worker === 'undefined') throw new Error('no Worker');
  return new Worker(new URL('./layout_worker.ts', import.meta.url), { type: 'module', name: 'graph-layout' });
}

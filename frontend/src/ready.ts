/**
 * The readiness marker the benchmark and the end-to-end tests wait for: `document.body.dataset.ready = "1"` once
 * the first runs response and the first page of every non-empty panel have rendered.
 *
 * Panels call `begin(key)` when they start their first load and `end(key)` once it is drawn (or failed, or found
 * nothing to draw). Ready fires when runs are in and nothing is pending, after the next frame has been painted:
 * every `begin` made by a panel reacting to the same store update (listeners run synchronously) or in a microtask
 * after it happens before that frame, and firing after the paint keeps "ready" meaning "on screen" — a fixed
 * delay would be either too short to promise that or needlessly long.
 *
 * Work that is not part of the first paint (e.g. the timeline's alert minimap) waits for `afterReady`, so it
 * neither delays the first pages on the server nor competes with their rendering.
 */
export class Readiness {
  private pending = new Set<string>();
  private runsDone = false;
  private fired = false;
  private scheduled = false;
  private waiting: (() => void)[] = [];

  constructor(private readonly onReady: () => void) {}

  begin(key: string): void {
    if (this.fired) return;
    this.pending.add(key);
  }

  end(key: string): void {
    if (this.fired) return;
    mark(`dbg:drawn:${key}`);
    this.pending.delete(key);
    this.check();
  }

  runsRendered(): void {
    if (!this.runsDone) mark('dbg:drawn:runs');
    this.runsDone = true;
    this.check();
  }

  get isReady(): boolean {
    return this.fired;
  }

  /** Runs `fn` once ready has fired (at once when it already has). */
  afterReady(fn: () => void): void {
    if (this.fired) fn();
    else this.waiting.push(fn);
  }

  private check(): void {
    if (this.fired || !this.runsDone || this.pending.size > 0 || this.scheduled) return;
    this.scheduled = true;
    afterNextPaint(() => {
      this.scheduled = false;
      if (this.fired || this.pending.size > 0) return;
      this.fired = true;
      this.onReady();
      const waiting = this.waiting;
      this.waiting = [];
      for (const fn of waiting) fn();
    });
  }
}

let drawingFrame = false;

/** Runs `fn` as part of an animation-frame callback (the virtual list draws there), so readiness knows the frame
 * about to be painted already holds what `fn` drew. */
export function inFrame(fn: () => void): void {
  drawingFrame = true;
  try {
    fn();
  } finally {
    drawingFrame = false;
  }
}

/** Calls `fn` once, in a task after the next paint: a rAF callback runs just before its frame's paint and a task
 * queued from it runs after, so from inside a frame's drawing a plain task suffices (one frame sooner). Without
 * rAF (node tests) or when the document is hidden and frames stop, a timer stands in. */
export function afterNextPaint(fn: () => void): void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    fn();
  };
  const raf = typeof requestAnimationFrame === 'function';
  if (raf && drawingFrame) setTimeout(once, 0);
  else if (raf) requestAnimationFrame(() => setTimeout(once, 0));
  setTimeout(once, raf ? 250 : 0);
}

/** A performance-timeline mark (bench/paint_profile.py prints them); absent APIs (old node) are ignored. */
function mark(name: string): void {
  globalThis.performance?.mark?.(name);
}

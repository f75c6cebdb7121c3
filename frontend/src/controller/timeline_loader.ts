/**
 * The timeline's data: the window of executions it shows (moved by paging, zoom, the minimap's click or dragged
 * range, a focused execution and the live run growing) with its fetched page, and the minimap's alert marks. Part of the controller: only it calls
 * these, and only these fetch executions.
 */
import type { Api } from '../api/client.ts';
import { PAGE_CAP } from '../api/client.ts';
import { mutesParam } from '../store/mutes.ts';
import { idle, loading, type State, type Store, type TimelineView } from '../store/store.ts';
import { Latest, settle } from './latest.ts';

/** Minimap bins: about one per pixel of a wide panel; the server answers fewer for a short run. */
export const MARK_BINS = 1000;

/** The run's execution count (the timeline's total). */
function executionCount(store: Store): number {
  return store.runInfo()?.counts.executions ?? 0;
}

export class TimelineLoader {
  /** Per page request: an older answer is dropped. */
  private readonly pageLatest = new Latest();
  private readonly marksLatest = new Latest();

  constructor(
    private readonly store: Store,
    private readonly api: Api,
  ) {}

  /** The window of a newly selected run with `count` executions: its first page (fetched by show(0) right after),
   * at the panel's current width. */
  initial(size: number, count: number): TimelineView {
    return { begin: 0, size, page: count > 0 ? loading() : idle() };
  }

  private clamp(begin: number, size: number): number {
    return Math.max(0, Math.min(begin, Math.max(0, executionCount(this.store) - size)));
  }

  /** Shows executions [begin, begin + size) (clamped to the run) and fetches them. */
  show(begin: number, size = this.store.state.timeline.size): void {
    const run = this.store.state.run;
    if (run === null) return;
    const view = { begin: this.clamp(begin, size), size, page: loading(this.store.state.timeline.page) };
    if (executionCount(this.store) === 0) {
      // Nothing to fetch: the panel says why the run has no executions.
      this.store.set({ timeline: { ...view, page: idle() } });
      return;
    }
    this.store.set({ timeline: view });
    void this.fetch(run, view.begin, size);
  }

  private async fetch(run: string, begin: number, size: number): Promise<void> {
    const live = this.pageLatest.beginForRun(this.store);
    await settle(this.api.executions(run, begin, begin + size), live, (page) => this.setPage(page));
  }

  private setPage(page: TimelineView['page']): void {
    this.store.set({ timeline: { ...this.store.state.timeline, page } });
  }

  /** Moves by whole windows (dir ±1). */
  page(dir: number): void {
    const t = this.store.state.timeline;
    this.show(t.begin + dir * t.size);
  }

  /** Centres the window on execution `index` (a minimap click). */
  centreOn(index: number): void {
    const t = this.store.state.timeline;
    this.show(index - Math.floor(t.size / 2));
  }

  /** The panel's width changed: as many boxes as fit, never more than a page. */
  resize(size: number): void {
    const t = this.store.state.timeline;
    const capped = Math.min(size, PAGE_CAP);
    if (capped === t.size) return;
    // Before a run is selected only the width is kept: the first page is fetched at it.
    if (this.store.state.run === null) this.store.set({ timeline: { ...t, size: capped } });
    else this.show(t.begin, capped);
  }

  /** A focused execution outside the window brings the window to it. */
  reveal(index: number): void {
    const t = this.store.state.timeline;
    if (index < t.begin || index >= t.begin + t.size) this.centreOn(index);
  }

  /** The run's execution count changed (live): follow the newest executions if the last page was on screen. */
  grew(prev: State): void {
    const t = this.store.state.timeline;
    const prevCount = prev.runs.data?.runs.find((r) => r.name === prev.run)?.counts.executions ?? 0;
    const atEnd = t.begin + t.size >= prevCount;
    this.show(atEnd ? executionCount(this.store) - t.size : t.begin);
  }

  /** Zooms to `size` executions in view (clamped to 1..PAGE_CAP), keeping execution `anchor` at `fraction` of the
   * width (the pointer's place under a wheel zoom). */
  zoom(size: number, anchor: number, fraction: number): void {
    const capped = Math.max(1, Math.min(Math.round(size), PAGE_CAP));
    this.show(Math.round(anchor - fraction * capped), capped);
  }

  /** Shows executions [begin, end) (a range dragged on the minimap), at most PAGE_CAP of them. */
  showRange(begin: number, end: number): void {
    const size = Math.max(1, Math.min(end - begin, PAGE_CAP));
    this.show(Math.max(0, begin), size);
  }

  /** The minimap's marks: every visible NaN/∞ alert of the run binned along the executions (after the mutes). */
  async loadMarks(): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const live = this.marksLatest.beginForRun(this.store);
    const answer = this.api.timelineMarks(run, MARK_BINS, mutesParam(this.store.state.mutes));
    // failed: no marks; the minimap still shows the window, and the alert list reports alert errors
    await settle(answer, live, (marks) => this.store.set({ timelineMarks: marks.data }));
  }
}

/**
 * Source Code's data: the run's file list (for the picker), the text of the file `source` points at and, per line
 * of it, the graph ops created there (the gutter markers). Part of the controller: every change of `source` goes
 * through `show`, which fetches a file (and its line counts) only when it is not the one loaded.
 */
import type { Api } from '../api/client.ts';
import type { SourceFileRef } from '../api/wire.ts';
import { loading, ready, type SourceFocus, type State, type Store } from '../store/store.ts';
import { Latest, settle } from './latest.ts';

/** User code first (what people look for), then everything else by path. */
export function userFilesFirst(files: SourceFileRef[]): SourceFileRef[] {
  return [...files].sort((a, b) => Number(b.is_user) - Number(a.is_user) || a.path.localeCompare(b.path));
}

export class SourceLoader {
  private readonly fileLatest = new Latest();
  private readonly listLatest = new Latest();
  private readonly countsLatest = new Latest();

  constructor(
    private readonly store: Store,
    private readonly api: Api,
  ) {}

  /**
   * The patch that points Source Code at `source`, fetching the file when it is another one than the file loaded
   * (a new line in the same file only moves the highlight). `extra` joins the same update.
   */
  show(source: SourceFocus | null, extra: Partial<State> = {}): void {
    const s = this.store.state;
    const run = s.run;
    const loaded = s.sourceFile.data;
    const sameFile = source !== null && loaded !== null && loaded.run === run && loaded.index === source.fileIndex;
    if (run === null || source === null || sameFile) {
      this.store.set({ ...extra, source });
      return;
    }
    // another file: its markers come with it, and a marker's open list belonged to the file shown before
    this.store.set({ ...extra, source, sourceFile: loading(), sourceLineCounts: loading(), lineOps: null });
    void this.fetchFile(run, source.fileIndex);
    void this.fetchCounts(run, source.fileIndex);
  }

  /** The run's ops or alerts grew (a live run): the markers of the file shown are asked for again, in place. */
  opsGrew(): void {
    const { run, source } = this.store.state;
    if (run !== null && source !== null) void this.fetchCounts(run, source.fileIndex);
  }

  private async fetchCounts(run: string, index: number): Promise<void> {
    const latest = this.countsLatest.begin();
    const live = () => latest() && run === this.store.state.run;
    // failed: no markers then; the file's text still shows (the markers are extra, not the panel's content)
    await settle(this.api.sourceLineCounts(run, index), live, (counts) => this.store.set({ sourceLineCounts: counts }));
  }

  private async fetchFile(run: string, index: number): Promise<void> {
    const latest = this.fileLatest.begin();
    const live = () => latest() && run === this.store.state.run;
    await settle(this.api.sourceFile(run, index), live, (sourceFile) => this.store.set({ sourceFile }));
  }

  /** The picker's list; a failure leaves the list as it was (the editor area reports the file it cannot show). */
  async loadFiles(): Promise<void> {
    const run = this.store.state.run;
    if (run === null) return;
    const live = this.listLatest.beginForRun(this.store);
    await settle(this.api.sourceFiles(run), live, (resp) => {
      if (resp.status === 'ready') this.store.set({ sourceFiles: ready(userFilesFirst(resp.data!.files)) });
    });
  }
}

/**
 * Source Code's marker list: the graph ops one source line created (route `line_ops`), fetched a page at a time, and
 * the focus of one of them. Part of the controller (`ctl.lineOps`); it writes `lineOps` only, and focuses through
 * the controller's own intents so every panel follows as it does for any focus.
 */
import type { Api } from '../api/client.ts';
import type { LineOp, LineOpsResponse } from '../api/wire.ts';
import { loading, ready, type LineOpsView, type Store } from '../store/store.ts';
import { Latest, settle } from './latest.ts';

/** Rows per page: a popover shows a few dozen; "more" fetches the next page. */
export const LINE_OPS_PAGE = 50;

/** How a listed op is focused: its first non-finite trace when it has one, else the op itself (Graph Structure's
 * navigation: the trace nearest the current focus, or "no trace"). */
export interface LineOpFocus {
  focusTrace(index: number): Promise<void>;
  navigateToOp(graphId: string, opName: string): Promise<void>;
}

/** A page appended to what was fetched before (the rows [0, end) so far). */
export function mergePage(before: LineOpsResponse | null, page: LineOpsResponse): LineOpsResponse {
  if (!before || page.begin !== before.end) return page;
  return { ...page, begin: 0, rows: [...before.rows, ...page.rows] };
}

export class LineOpsLoader {
  private readonly latest = new Latest();

  constructor(
    private readonly store: Store,
    private readonly api: Api,
    private readonly focus: LineOpFocus,
  ) {}

  /** Opens the list of `line` of the file shown (a marker's click or Enter); opening the one open closes it. */
  toggle(line: number): void {
    const { run, source, lineOps } = this.store.state;
    if (run === null || source === null) return;
    if (lineOps && lineOps.fileIndex === source.fileIndex && lineOps.line === line) return this.close();
    const view: LineOpsView = { fileIndex: source.fileIndex, line, list: loading() };
    this.store.set({ lineOps: view });
    void this.fetch(run, view, 0);
  }

  /** The next page of the open list. */
  more(): void {
    const { run, lineOps } = this.store.state;
    const got = lineOps?.list.data;
    if (run === null || !lineOps || !got || lineOps.list.status === 'loading' || got.end >= got.total) return;
    this.store.set({ lineOps: { ...lineOps, list: loading(lineOps.list) } });
    void this.fetch(run, lineOps, got.end);
  }

  close(): void {
    this.latest.drop();
    if (this.store.state.lineOps !== null) this.store.set({ lineOps: null });
  }

  /** Focuses a listed op (the list closes: the focus moves Source Code to the op's own line). */
  async focusOp(op: LineOp): Promise<void> {
    this.close();
    if (op.first_nonfinite !== null) await this.focus.focusTrace(op.first_nonfinite);
    else await this.focus.navigateToOp(op.graph_id, op.op_name);
  }

  private async fetch(run: string, view: LineOpsView, begin: number): Promise<void> {
    const live = this.latest.begin(() => run === this.store.state.run && this.store.state.lineOps !== null);
    const answer = this.api.lineOps(run, view.fileIndex, view.line, begin, begin + LINE_OPS_PAGE);
    await settle(answer, live, (page) => {
      const now = this.store.state.lineOps!;
      const list = page.status === 'ready' ? ready(mergePage(now.list.data, page.data!)) : page;
      this.store.set({ lineOps: { ...now, list } });
    });
  }
}

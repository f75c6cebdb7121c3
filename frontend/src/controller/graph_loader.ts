/**
 * Graph Structure's drawn neighbourhood: fetched for the op in `op` when the panel is in its drawn mode (the list
 * mode needs only the op). Part of the controller: the op, the mode or the hops changing goes through `refresh`.
 */
import type { Api } from '../api/client.ts';
import { idle, loading, type GraphView, type State, type Store } from '../store/store.ts';
import { Latest, settle } from './latest.ts';

export const MAX_HOPS = 8;

export class GraphLoader {
  private readonly latest = new Latest();

  constructor(
    private readonly store: Store,
    private readonly api: Api,
  ) {}

  /** The view's mode and hops (clamped to 1..MAX_HOPS), then the neighbourhood they ask for. */
  setView(view: Partial<GraphView>): void {
    const next = { ...this.store.state.graphView, ...view };
    next.hops = Math.min(Math.max(Math.round(next.hops) || 1, 1), MAX_HOPS);
    const now = this.store.state.graphView;
    if (next.mode === now.mode && next.hops === now.hops) return; // e.g. the hops field's change on blur
    this.store.set({ graphView: next });
    this.refresh();
  }

  /** Fetches the neighbourhood of the op shown (its trace nearest the focus), or clears it in the list mode. */
  refresh(): void {
    const s: State = this.store.state;
    const op = s.op.data;
    const latest = this.latest.begin();
    if (s.run === null || !op || s.graphView.mode !== 'drawn') {
      if (s.neighborhood.status !== 'idle') this.store.set({ neighborhood: idle() });
      return;
    }
    const near = s.focus?.kind === 'graph_execution' ? s.focus.index : undefined;
    const run = s.run;
    this.store.set({ neighborhood: loading(s.neighborhood) });
    const live = () => latest() && run === this.store.state.run;
    const answer = this.api.neighborhood(run, op.graph_id, op.op_name, s.graphView.hops, near);
    void settle(answer, live, (neighborhood) => this.store.set({ neighborhood }));
  }
}

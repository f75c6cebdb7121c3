/**
 * Part of the controller (#18): the intents of the mutes, the rules' alert summary and the health map, as
 * `ctl.rules`. Mutes are sent with the alert and root-cause requests (store/mutes.ts) and kept in the URL and, per
 * logdir, in the browser; the data is fetched by rules_loader.ts. What the controller does on their behalf (write
 * the URL, fetch the alert list and the root cause again) it does through `RulesHost`.
 */
import type { Api } from '../api/client.ts';
import { MAP_ROWS, RulesLoader } from './rules_loader.ts';
import { parseMutes, sameMute, type Mute } from '../store/mutes.ts';
import type { Store } from '../store/store.ts';

const STORAGE_PREFIX = 'dbg-mutes:';

/** The controller's part in a mute change. */
export interface RulesHost {
  saveUrl(): void;
  /** Fetch the open alert list again (its rows depend on the mutes and on the rules' findings). */
  reopenAlerts(): void;
  loadRootCause(): void;
}

export class RulesIntents {
  private readonly loader: RulesLoader;
  private mutesLoaded = false;

  constructor(
    private readonly store: Store,
    api: Api,
    private readonly host: RulesHost,
  ) {
    this.loader = new RulesLoader(store, api, () => host.reopenAlerts());
  }

  /** The first `runs` answer: the URL's mutes (a permalink) win over the ones this browser remembers for the
   * logdir. Later answers change nothing. */
  loadMutes(logdir: string, fromUrl: Mute[] | null | undefined): void {
    if (this.mutesLoaded) return;
    this.mutesLoaded = true;
    this.store.set({ mutes: fromUrl ?? storedMutes(logdir) });
  }

  /** A run is shown: its alert summary, and the health map's first page when the map is open. */
  runShown(): void {
    void this.loader.loadSummary();
    if (this.store.state.healthMapOpen) void this.loader.loadMap(0);
  }

  /** The run's alerts grew, or it was read to its end: the summary again. */
  grew(): void {
    void this.loader.loadSummary();
  }

  /** An op is shown for a trace: its health across steps (Graph Structure's sparkline). */
  opShown(run: string, graphId: string, opName: string): void {
    void this.loader.loadOpHealth(run, graphId, opName);
  }

  /** Mutes: the server hides what they match from the alert list, its totals and the root cause. */
  addMute(mute: Mute): void {
    if (this.store.state.mutes.some((m) => sameMute(m, mute))) return;
    this.setMutes([...this.store.state.mutes, mute]);
  }

  removeMute(index: number): void {
    this.setMutes(this.store.state.mutes.filter((_m, i) => i !== index));
  }

  private setMutes(mutes: Mute[]): void {
    this.store.set({ mutes });
    const logdir = this.store.state.runs.data?.logdir;
    if (logdir !== undefined) storeMutes(logdir, mutes);
    this.host.saveUrl();
    this.host.reopenAlerts();
    this.host.loadRootCause();
    void this.loader.loadSummary();
  }

  /** The health map (op x step) view: open or close it. */
  showHealthMap(open: boolean): void {
    this.store.set({ healthMapOpen: open });
    if (open) void this.loader.loadMap(0);
  }

  /** The health map's rows: only ops whose name or type holds `text` ('' for all), from the first. */
  filterHealthMap(text: string): void {
    if (text === this.store.state.healthMapOps) return;
    this.store.set({ healthMapOps: text });
    void this.loader.loadMap(0);
  }

  /** Next (dir 1) or previous (-1) page of the health map's rows. */
  pageHealthMap(dir: number): void {
    const m = this.store.state.healthMap.data;
    if (m) void this.loader.loadMap(Math.max(0, m.begin + dir * MAP_ROWS));
  }
}

/** The mutes the browser remembers for `logdir` ([] when none or storage is unavailable). */
function storedMutes(logdir: string): Mute[] {
  try {
    return parseMutes(window.localStorage.getItem(STORAGE_PREFIX + logdir)) ?? [];
  } catch {
    return []; // storage disabled (private mode, sandboxed iframe): the URL still carries them
  }
}

function storeMutes(logdir: string, mutes: readonly Mute[]): void {
  try {
    if (mutes.length) window.localStorage.setItem(STORAGE_PREFIX + logdir, JSON.stringify(mutes));
    else window.localStorage.removeItem(STORAGE_PREFIX + logdir);
  } catch {
    // storage disabled: nothing to remember
  }
}

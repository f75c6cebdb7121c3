/**
 * The view in the URL: run and focus, so a link or a reload restores it.
 *
 * TensorBoard owns the top-level hash (`#dbg`), so the state lives in the iframe's own `location.hash` and is
 * mirrored into the parent page's query parameter `dbg` when the parent is same-origin, so reloading the whole
 * TensorBoard page restores it too. Each new focus is a history entry of the iframe (history.pushState), so the
 * browser's Back steps back one focus (`listenUrlState` hears it); other changes replace the entry.
 */
import type { CompareTolerances } from '../api/requests.ts';
import type { Focus } from '../store/store.ts';
import { parseMutes, type Mute } from '../store/mutes.ts';

export interface UrlState {
  run: string | null;
  focus: Focus | null;
  alert: number | null;
  /** The mutes (store/mutes.ts); absent or null: none in the URL (the browser's remembered ones apply). */
  mutes?: Mute[] | null;
  /** Graph Execution's device and host facets (full names), when set. */
  device?: string;
  host?: string;
  /** The tf.function call opened in Graph Execution (its execution index). */
  call?: number;
  /** The timeline's first execution in view. */
  timeline?: number;
  /** The baseline run the run shown is compared with (`cmp=`; the server checks the name). */
  cmp?: string;
  /** The comparison's tolerances (`atol=`, `rtol=`), when the user set them. */
  tol?: CompareTolerances;
}

const PARENT_PARAM = 'dbg';

export function encodeUrlState(s: UrlState): string {
  const q = new URLSearchParams();
  if (s.run !== null) q.set('run', s.run);
  if (s.focus) q.set(s.focus.kind === 'graph_execution' ? 'ge' : 'ex', String(s.focus.index));
  if (s.alert !== null) q.set('alert', String(s.alert));
  if (s.mutes && s.mutes.length) q.set('mutes', JSON.stringify(s.mutes));
  if (s.device) q.set('device', s.device);
  if (s.host) q.set('host', s.host);
  if (s.call !== undefined) q.set('call', String(s.call));
  if (s.timeline) q.set('tl', String(s.timeline));
  if (s.cmp) q.set('cmp', s.cmp);
  if (s.tol?.atol !== undefined) q.set('atol', String(s.tol.atol));
  if (s.tol?.rtol !== undefined) q.set('rtol', String(s.tol.rtol));
  return q.toString();
}

/** A tolerance from the URL: a plain non-negative decimal, or nothing. */
function tolerance(v: string | null): number | undefined {
  if (v === null || !/^[0-9]*\.?[0-9]+(e[-+]?[0-9]{1,3})?$/i.test(v)) return undefined;
  return Number(v);
}

function nonNegInt(v: string | null): number | null {
  if (v === null || !/^[0-9]{1,15}$/.test(v)) return null;
  return Number(v);
}

/** Parses what `encodeUrlState` wrote; anything malformed is ignored rather than trusted. */
export function decodeUrlState(text: string): UrlState {
  const q = new URLSearchParams(text.replace(/^[#?]/, ''));
  const ge = nonNegInt(q.get('ge'));
  const ex = nonNegInt(q.get('ex'));
  const focus: Focus | null =
    ge !== null ? { kind: 'graph_execution', index: ge } : ex !== null ? { kind: 'execution', index: ex } : null;
  const mutes = parseMutes(q.get('mutes'));
  // The server checks a facet's name (a malformed one is a 400 the list shows); here only its presence.
  const device = q.get('device') || undefined;
  const host = q.get('host') || undefined;
  const call = nonNegInt(q.get('call'));
  const timeline = nonNegInt(q.get('tl'));
  const cmp = q.get('cmp') || undefined;
  const atol = tolerance(q.get('atol'));
  const rtol = tolerance(q.get('rtol'));
  const tol: CompareTolerances = { ...(atol !== undefined ? { atol } : {}), ...(rtol !== undefined ? { rtol } : {}) };
  return {
    run: q.get('run'),
    focus,
    alert: nonNegInt(q.get('alert')),
    ...(mutes ? { mutes } : {}),
    ...(device ? { device } : {}),
    ...(host ? { host } : {}),
    ...(call !== null ? { call } : {}),
    ...(timeline ? { timeline } : {}),
    ...(cmp ? { cmp } : {}),
    ...(cmp && Object.keys(tol).length ? { tol } : {}),
  };
}

function parentWindow(): Window | null {
  try {
    if (window.parent && window.parent !== window && window.parent.location.href) return window.parent;
  } catch {
    // Cross-origin parent: only the iframe's own hash is used.
  }
  return null;
}

/** Reads the state: the iframe's own hash first, else the parent's `dbg` query parameter. */
export function readUrlState(): UrlState {
  const own = window.location.hash.replace(/^#/, '');
  if (own) return decodeUrlState(own);
  const parent = parentWindow();
  if (parent) {
    const v = new URL(parent.location.href).searchParams.get(PARENT_PARAM);
    if (v) return decodeUrlState(v);
  }
  return { run: null, focus: null, alert: null };
}

export function writeUrlState(s: UrlState, push = false): void {
  const text = encodeUrlState(s);
  const own = new URL(window.location.href);
  own.hash = text;
  if (own.href !== window.location.href) {
    if (push) history.pushState(null, '', own.href);
    else history.replaceState(history.state, '', own.href);
  }
  const parent = parentWindow();
  if (!parent) return;
  try {
    const url = new URL(parent.location.href);
    if (text) url.searchParams.set(PARENT_PARAM, text);
    else url.searchParams.delete(PARENT_PARAM);
    if (url.href !== parent.location.href) parent.history.replaceState(parent.history.state, '', url.href);
  } catch {
    // The parent refused (sandbox or a navigation in progress); the iframe's hash still holds the state.
  }
}

/** Calls `cb` with the URL's state when the browser goes back or forward through the iframe's entries. */
export function listenUrlState(cb: (s: UrlState) => void): void {
  window.addEventListener('popstate', () => cb(readUrlState()));
}

export function goBack(): void {
  history.back();
}

/** Where the controller keeps the view: the browser's URL and history (tests pass an in-memory one). */
export interface UrlIO {
  read(): UrlState;
  /** `push`: a new history entry (a new focus), else the current entry is replaced. */
  write(s: UrlState, push?: boolean): void;
  /** Hears Back / Forward. */
  listen(cb: (s: UrlState) => void): void;
  back(): void;
}

export const browserUrl: UrlIO = { read: readUrlState, write: writeUrlState, listen: listenUrlState, back: goBack };

/**
 * Mutes: alerts the user dismissed, with a reason. The server applies them (the `mutes` request parameter: alert
 * list, totals, root cause); the browser keeps them in the URL (a permalink carries them) and in localStorage per
 * logdir (a new tab on the same logdir starts with them; controller/rules_intents.ts reads and writes it). Nothing
 * is written on the server.
 *
 * A mute's fields match together (AND); any mute hides (OR). `op_name` is a glob over the whole name (`*`, `?`), or
 * a regular expression after `re:` (analysis/rules/mutes.py is the reference).
 */
import type { Alert } from '../api/wire.ts';

export interface Mute {
  rule?: string;
  op_type?: string;
  op_name?: string;
  graph_id?: string;
  reason: string;
}

/** What the user can mute an alert by (the alert row's mute form offers these). */
export type MuteScope = 'op_name' | 'op_type' | 'rule' | 'graph_id';

const FIELDS = ['rule', 'op_type', 'op_name', 'graph_id'] as const;
const MAX_MUTES = 50;

/** The mute that hides alerts like `a` by `scope`, with `reason`; null when the alert has no such field. */
export function muteFor(a: Alert, scope: MuteScope, reason: string): Mute | null {
  const value =
    scope === 'rule' ? a.type : scope === 'op_name' ? a.op_name : scope === 'op_type' ? a.op_type : a.graph_id;
  if (!value) return null;
  // an op name is a glob: escape its own glob characters so it matches just that name
  const pattern = scope === 'op_name' ? value.replace(/[*?[\]]/g, (c) => `[${c}]`) : value;
  return { [scope]: pattern, reason };
}

export function describeMute(m: Mute): string {
  return FIELDS.filter((f) => m[f])
    .map((f) => `${f}=${m[f]}`)
    .join(' ');
}

/** The `mutes` request parameter, or undefined for none (the request then is what it was before mutes). */
export function mutesParam(mutes: readonly Mute[]): string | undefined {
  return mutes.length ? JSON.stringify(mutes) : undefined;
}

/** Mutes from untrusted JSON text (URL, localStorage): anything malformed is dropped, not trusted. */
export function parseMutes(text: string | null): Mute[] | null {
  if (!text) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(raw)) return null;
  const out: Mute[] = [];
  for (const item of raw.slice(0, MAX_MUTES)) {
    if (typeof item !== 'object' || item === null) continue;
    const rec = item as Record<string, unknown>;
    const m: Mute = { reason: typeof rec.reason === 'string' ? rec.reason : '' };
    for (const f of FIELDS) if (typeof rec[f] === 'string' && rec[f]) m[f] = rec[f] as string;
    if (FIELDS.some((f) => m[f])) out.push(m);
  }
  return out;
}

export function sameMute(a: Mute, b: Mute): boolean {
  return FIELDS.every((f) => (a[f] ?? '') === (b[f] ?? ''));
}

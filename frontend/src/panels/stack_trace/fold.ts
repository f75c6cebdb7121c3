/**
 * Stack folding: frames stay in recorded order (outermost first); runs of consecutive library frames become one
 * "N library frames" group so the user's frames stand out. A run of one library frame is not worth folding.
 */
import type { StackFrame } from '../../api/wire.ts';

export type StackItem =
  | { kind: 'frame'; frame: StackFrame; index: number }
  | { kind: 'fold'; frames: StackFrame[]; first: number; key: string };

export function foldStack(frames: StackFrame[], minRun = 2): StackItem[] {
  const out: StackItem[] = [];
  let i = 0;
  while (i < frames.length) {
    if (frames[i]!.is_user) {
      out.push({ kind: 'frame', frame: frames[i]!, index: i });
      i++;
      continue;
    }
    let j = i;
    while (j < frames.length && !frames[j]!.is_user) j++;
    if (j - i >= minRun) out.push({ kind: 'fold', frames: frames.slice(i, j), first: i, key: `${i}-${j}` });
    else for (let k = i; k < j; k++) out.push({ kind: 'frame', frame: frames[k]!, index: k });
    i = j;
  }
  return out;
}

/** Last path component, for compact display (the full path goes in the title). */
export function baseName(path: string | null): string {
  if (!path) return '(source not yet read)';
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

/**
 * Short source paths for pickers: a library file from its package on (`…/site-packages/tensorflow/x.py` →
 * `tensorflow/x.py`), a user file without the folders all user files share. The full path stays in the title.
 */

const LIB_ROOTS = /^.*\/(?:site-packages|dist-packages|lib\/python3(?:\.\d+)?)\//;

function commonDir(paths: string[]): string {
  if (paths.length < 2) return paths.length ? paths[0]!.slice(0, paths[0]!.lastIndexOf('/') + 1) : '';
  let prefix = paths[0]!;
  for (const p of paths) while (!p.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix.slice(0, prefix.lastIndexOf('/') + 1);
}

/** Short names of `paths` (user files' common folder removed; library files from their package on). */
export function shortPaths(paths: string[], isUser: boolean[]): string[] {
  const user = paths.filter((_, i) => isUser[i]);
  const common = commonDir(user);
  return paths.map((p, i) => {
    if (isUser[i]) return p.slice(common.length) || p;
    const short = p.replace(LIB_ROOTS, '');
    return short || p;
  });
}

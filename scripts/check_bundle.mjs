// Rebuilds the frontend into a temporary folder and fails when the result differs from the bundle committed in
// the package (tensorboard_plugin_dbg/static/): the shipped files must be exactly what the source builds. Every
// built file is compared (index.js and the lazily loaded chunks it names), and a script in static/ that the build
// does not make (a stale chunk) fails too. On a fresh clone this also catches a chunk that was never committed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const staticDir = path.join(root, 'tensorboard_plugin_dbg/static');
const out = mkdtempSync(path.join(tmpdir(), 'dbg-bundle-'));
const scripts = (dir) => readdirSync(dir).filter((f) => f.endsWith('.js')).sort();
try {
  execFileSync(path.join(root, 'node_modules/.bin/webpack'), ['--env', `outDir=${out}`], { cwd: root, stdio: 'inherit' });
  const built = scripts(out);
  const shipped = scripts(staticDir);
  const problems = [];
  for (const name of built) {
    if (!shipped.includes(name)) problems.push(`${name} is built but missing from the package`);
    else if (!readFileSync(path.join(out, name)).equals(readFileSync(path.join(staticDir, name))))
      problems.push(`${name} differs from a fresh build`);
  }
  for (const name of shipped) if (!built.includes(name)) problems.push(`${name} is in the package but not built (stale)`);
  if (problems.length) {
    for (const p of problems) console.error(`check_bundle: FAILED: tensorboard_plugin_dbg/static/${p}`);
    console.error('check_bundle: run `npm run build` and commit tensorboard_plugin_dbg/static/');
    process.exit(1);
  }
  console.log(`check_bundle: ok (${built.join(', ')} identical to a fresh build)`);
} finally {
  rmSync(out, { recursive: true, force: true });
}

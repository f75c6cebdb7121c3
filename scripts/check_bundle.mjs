// Rebuilds the frontend into a temporary folder and fails when the result differs from the bundle committed in
// the package (tensorboard_plugin_dbg/static/index.js): the shipped bundle must be exactly what the source builds.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = mkdtempSync(path.join(tmpdir(), 'dbg-bundle-'));
try {
  execFileSync(path.join(root, 'node_modules/.bin/webpack'), ['--env', `outDir=${out}`], { cwd: root, stdio: 'inherit' });
  const fresh = readFileSync(path.join(out, 'index.js'));
  const committed = readFileSync(path.join(root, 'tensorboard_plugin_dbg/static/index.js'));
  if (!fresh.equals(committed)) {
    console.error('check_bundle: FAILED: tensorboard_plugin_dbg/static/index.js differs from a fresh build; run `npm run build` and commit it');
    process.exit(1);
  }
  console.log(`check_bundle: ok (${committed.length} bytes, identical to a fresh build)`);
} finally {
  rmSync(out, { recursive: true, force: true });
}

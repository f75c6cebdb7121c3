/**
 * Data flows one way: panels call the controller's intents, the controller (with its loaders, `src/controller/`)
 * alone fetches through the API client and writes the store, and panels draw what the store holds. These tests hold
 * the boundaries docs/ARCHITECTURE.md states (who imports the client, who writes the store, what the store and the
 * views may import, no import cycle) and follow intents through to the state a panel draws.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Store } from '../src/store/store.ts';
import { Controller } from '../src/controller/controller.ts';
import { FakeApi, memUrl, runInfo } from './fake_api.ts';

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '../src');
const settle = () => new Promise((r) => setTimeout(r, 5));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** One import of a module: the module it names (a path relative to src/) and whether it brings types only. */
interface Import {
  target: string;
  typeOnly: boolean;
}

/** Every static, re-exporting and dynamic import of `file` that names a module of src/ (packages are left out). */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const found: Import[] = [];
  const add = (spec: string, typeOnly: boolean) => {
    if (spec.startsWith('.'))
      found.push({ target: path.relative(SRC, path.resolve(path.dirname(file), spec)), typeOnly });
  };
  for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?([^;]*?)\s*from\s+'([^']+)'/gms)) {
    const names =
      /\{([^}]*)\}/
        .exec(m[2]!)?.[1]
        ?.split(',')
        .filter((n) => n.trim()) ?? [];
    const allTypes = names.length > 0 && names.every((n) => /^\s*type\s/.test(n)) && !/^\w/.test(m[2]!);
    add(m[3]!, !!m[1] || allTypes);
  }
  for (const m of text.matchAll(/^import\s+'([^']+)'/gm)) add(m[1]!, false);
  for (const m of text.matchAll(/\bimport\(\s*(?:\/\*.*?\*\/\s*)?'([^']+)'\s*\)/g)) add(m[1]!, false);
  return found;
}

const ALL = sources(SRC);
const rel = (file: string) => path.relative(SRC, file);
const inController = (r: string) => r.startsWith('controller/');

test('the module list is read: every module, its imports', () => {
  assert.ok(ALL.length > 80);
  const ctl = importsOf(path.join(SRC, 'controller/controller.ts'));
  assert.ok(ctl.some((i) => i.target === 'api/client.ts' && i.typeOnly));
  assert.ok(ctl.some((i) => i.target === 'store/store.ts' && !i.typeOnly));
  const code = importsOf(path.join(SRC, 'panels/source_code/source_code.ts'));
  assert.ok(
    code.some((i) => i.target === 'panels/source_code/editor.ts'),
    'a dynamic import counts',
  );
});

test('only src/controller/ imports the API client (index.ts makes the one HttpApi and hands it over)', () => {
  for (const file of ALL) {
    const r = rel(file);
    if (inController(r) || r === 'index.ts' || r.startsWith('api/')) continue;
    const bad = importsOf(file).filter((i) => i.target === 'api/client.ts');
    assert.deepEqual(bad, [], `${r} imports the API client`);
  }
  for (const file of ALL.filter((f) => !rel(f).startsWith('controller/') && rel(f) !== 'api/client.ts'))
    assert.doesNotMatch(readFileSync(file, 'utf8'), /\bfetch\(|\.api\./, `${rel(file)} fetches`);
});

test('only src/controller/ writes the store', () => {
  for (const file of ALL.filter((f) => !inController(rel(f))))
    assert.doesNotMatch(readFileSync(file, 'utf8'), /\bstore\.set\(/, `${rel(file)} writes the store`);
});

test('src/store/ imports nothing from the controller, the panels or the client', () => {
  for (const file of ALL.filter((f) => rel(f).startsWith('store/'))) {
    const bad = importsOf(file).filter(
      (i) => inController(i.target) || i.target.startsWith('panels/') || i.target === 'api/client.ts',
    );
    assert.deepEqual(bad, [], rel(file));
  }
});

test('views import only types (the Controller) from src/controller/; widgets nothing from the store', () => {
  for (const file of ALL.filter((f) => !inController(rel(f)) && rel(f) !== 'index.ts')) {
    const bad = importsOf(file).filter((i) => inController(i.target) && !i.typeOnly);
    assert.deepEqual(bad, [], `${rel(file)} imports the controller's code`);
  }
  for (const file of sources(path.join(SRC, 'widgets'))) {
    const bad = importsOf(file).filter((i) => i.target.startsWith('store/') || inController(i.target));
    assert.deepEqual(bad, [], rel(file));
  }
});

/** An import cycle among `graph`'s modules (each module's path, the first one again at the end), or null. */
function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | null => {
    if (state.get(node) === 'done') return null;
    if (state.get(node) === 'open') return [...stack.slice(stack.indexOf(node)), node];
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(node, 'done');
    return null;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

test('the cycle finder finds a cycle, and none where there is none', () => {
  assert.deepEqual(
    findCycle(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a']],
      ]),
    ),
    ['a', 'b', 'c', 'a'],
  );
  assert.equal(
    findCycle(
      new Map([
        ['a', ['b', 'c']],
        ['b', ['c']],
        ['c', []],
      ]),
    ),
    null,
  );
});

test('no import cycle among the modules of src/ (type-only imports count)', () => {
  const graph = new Map(ALL.map((f) => [rel(f), importsOf(f).map((i) => i.target)]));
  assert.equal(findCycle(graph)?.join(' -> ') ?? null, null);
});

async function started(api = new FakeApi()) {
  const store = new Store();
  const ctl = new Controller(store, api, memUrl());
  await ctl.start();
  ctl.stop();
  await settle();
  return { store, ctl, api };
}

test('a list asks the controller for rows in view; the controller fetches the missing pages into the store', async () => {
  const api = new FakeApi();
  api.runsList = [runInfo('a', 1000, 1)];
  const { store, ctl } = await started(api);
  assert.ok(api.calls.includes('graph_executions a 0 200'), 'the first page comes unasked');
  ctl.loadGraphExecutionRows(450, 480);
  await settle();
  assert.ok(api.calls.includes('graph_executions a 400 600'));
  assert.equal(store.state.geRows.item(450)?.index, 450);
  const before = api.calls.length;
  ctl.loadGraphExecutionRows(420, 460);
  await settle();
  assert.equal(api.calls.length, before, 'a cached page is not fetched again');
});

test('filters make a new data set; a focus they hide drops them, one they show keeps them', async () => {
  const { store, ctl } = await started();
  ctl.setFilters({ onlyNonfinite: true });
  await settle();
  const filtered = store.state.geRows;
  assert.equal(filtered.total, 1);
  assert.equal(filtered.unfilteredTotal, 10);
  assert.equal(filtered.item(0)?.index, 7);
  await ctl.focusGraphExecution(7);
  assert.deepEqual(store.state.geFilters, { onlyNonfinite: true });
  assert.equal(store.state.geScroll?.position, 0, 'trace 7 is row 0 of the filtered list');
  await ctl.focusGraphExecution(3);
  assert.deepEqual(store.state.geFilters, {}, 'trace 3 is not in the filtered list: the filters go');
  assert.equal(store.state.geScroll?.position, 3);
  assert.notEqual(store.state.geRows.key, filtered.key);
});

test('live growth: pages are fetched again in place; alerts appearing open their type', async () => {
  const api = new FakeApi();
  api.runsList = [runInfo('a', 10, 0, false)];
  const { store, ctl } = await started(api);
  assert.equal(store.state.alertType, null);
  const rows = store.state.geRows;
  api.runsList = [runInfo('a', 20, 1, false)];
  await (ctl as unknown as { refreshRuns(): Promise<boolean> }).refreshRuns();
  assert.equal(store.state.alertType, 'InfNanAlert');
  assert.equal(store.state.geRows.key, rows.key, 'same data set: scroll and selection stay');
  assert.equal(store.state.geRows.item(3)?.index, 3, 'rows stay on screen until fetched again');
  ctl.loadGraphExecutionRows(0, 20);
  await settle();
  assert.equal(store.state.geRows.total, 20);
  assert.equal(store.state.rootCause.status, 'ready');
});

test('next alert (n): the controller finds it and focuses it everywhere', async () => {
  const { store, ctl } = await started();
  await ctl.stepAlert(1);
  await settle();
  assert.equal(store.state.alertIndex, 0);
  assert.deepEqual(store.state.focus, { kind: 'graph_execution', index: 7 });
  assert.deepEqual(store.state.source, { fileIndex: 0, line: 42 });
});

test('timeline: the panel reports its width; the controller fetches that window', async () => {
  const { store, ctl, api } = await started();
  ctl.timeline.resize(12);
  await settle();
  assert.equal(store.state.timeline.size, 12);
  assert.ok(api.calls.includes('executions a 0 12'));
});

test('live growth from no traces: the empty list is fetched again once the run has some', async () => {
  const api = new FakeApi();
  api.runsList = [runInfo('a', 0, 0, false)];
  const { store, ctl } = await started(api);
  assert.equal(store.state.geRows.loaded, true);
  assert.equal(store.state.geRows.total, 0);
  api.runsList = [runInfo('a', 5, 0, false)];
  await (ctl as unknown as { refreshRuns(): Promise<boolean> }).refreshRuns();
  ctl.loadGraphExecutionRows(0, 0); // what the empty list asks for when it draws
  await settle();
  assert.equal(store.state.geRows.total, 5);
});

test('a run that finishes indexing gets its root cause again, even with no alert (unknown -> clean)', async () => {
  const api = new FakeApi();
  api.runsList = [runInfo('a', 0, 0, false)];
  const { ctl } = await started(api);
  const asked = () => api.calls.filter((c) => c === 'root_cause a').length;
  const before = asked();
  api.runsList = [runInfo('a', 5, 0, false)];
  await (ctl as unknown as { refreshRuns(): Promise<boolean> }).refreshRuns();
  assert.equal(asked(), before, 'traces alone do not ask again while the run is read (each would be a new analysis)');
  api.runsList = [runInfo('a', 5, 0, true)];
  await (ctl as unknown as { refreshRuns(): Promise<boolean> }).refreshRuns();
  await settle();
  assert.equal(asked(), before + 1, 'done: the final answer is asked for');
});

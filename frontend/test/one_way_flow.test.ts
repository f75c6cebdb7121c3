/**
 * Data flows one way: panels call the controller's intents, the controller alone fetches (through the API client)
 * and writes the store, and panels draw what the store holds. These tests hold the boundaries (no panel or widget
 * reaches the client, widgets know no store) and follow intents through to the state a panel draws.
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

const importsOf = (file: string) => [...readFileSync(file, 'utf8').matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]!);

test('no panel, widget or the header reaches the API client or fetch', () => {
  const viewFiles = [
    ...sources(path.join(SRC, 'panels')),
    ...sources(path.join(SRC, 'widgets')),
    path.join(SRC, 'header.ts'),
  ];
  assert.ok(viewFiles.length > 15);
  for (const file of viewFiles) {
    const rel = path.relative(SRC, file);
    assert.ok(!importsOf(file).some((i) => i.endsWith('api/client.ts')), `${rel} imports the API client`);
    assert.doesNotMatch(readFileSync(file, 'utf8'), /\bfetch\(|\.api\./, `${rel} fetches`);
  }
});

test('widgets import nothing from the store', () => {
  for (const file of sources(path.join(SRC, 'widgets'))) {
    const bad = importsOf(file).filter((i) => i.includes('/store/'));
    assert.deepEqual(bad, [], path.relative(SRC, file));
  }
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

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../src/store/store.ts';
import { Controller } from '../src/controller/controller.ts';
import { decodeUrlState, encodeUrlState } from '../src/controller/url.ts';
import { DeviceFacets, REFRESH_MS } from '../src/controller/device_facets.ts';
import { facetOptions, facetShown } from '../src/store/facets.ts';
import { deviceLabels, shortDevice } from '../src/widgets/devices.ts';
import type { DevicesResponse } from '../src/api/wire.ts';
import { FakeApi, memUrl, startController } from './fake_api.ts';

const settle = () => new Promise((r) => setTimeout(r, 5));
const CPU0 = '/job:localhost/replica:0/task:0/device:CPU:0';
const CPU1 = '/job:localhost/replica:0/task:0/device:CPU:1';

test('a device reads as its short name, unless two devices would then read the same', () => {
  assert.equal(shortDevice(CPU1), 'CPU:1');
  assert.equal(shortDevice('/device:GPU:0'), 'GPU:0');
  assert.equal(shortDevice('odd-name'), 'odd-name');
  assert.deepEqual([...deviceLabels([CPU0, CPU1]).values()], ['CPU:0', 'CPU:1']);
  const workers = ['/job:worker/replica:0/task:0/device:CPU:0', '/job:worker/replica:0/task:1/device:CPU:0'];
  assert.deepEqual([...deviceLabels(workers).values()], ['task:0/CPU:0', 'task:1/CPU:0']);
  const jobs = ['/job:ps/replica:0/task:0/device:CPU:0', '/job:worker/replica:0/task:0/device:CPU:0'];
  assert.deepEqual([...deviceLabels(jobs).values()], jobs);
});

test('facet options: traced devices and hosts with their trace counts; a chosen unknown one stays, with 0', () => {
  const resp: DevicesResponse = {
    run: 'r',
    hosts: ['h1', 'h2'],
    devices: [
      { device_name: CPU0, host: 'h1', graph_executions: 4, executions: 1 },
      { device_name: CPU0, host: 'h2', graph_executions: 3, executions: 0 },
      { device_name: CPU1, host: 'h1', graph_executions: 0, executions: 2 }, // eager only: filters no trace
      { device_name: null, host: 'h1', graph_executions: 5, executions: 0 },
    ],
  };
  const got = facetOptions(resp, {});
  assert.deepEqual(got.devices, [{ value: CPU0, label: 'CPU:0', traces: 7 }]);
  assert.deepEqual(got.hosts, [
    { value: 'h1', label: 'h1', traces: 9 },
    { value: 'h2', label: 'h2', traces: 3 },
  ]);
  assert.equal(facetShown(got.devices, undefined), false, 'one device tells no rows apart');
  assert.equal(facetShown(got.hosts, undefined), true);
  const linked = facetOptions(resp, { device: '/job:x/device:GPU:3' });
  assert.deepEqual(linked.devices.at(-1), { value: '/job:x/device:GPU:3', label: 'GPU:3', traces: 0 });
  assert.equal(facetShown([], 'h9'), true, 'a chosen facet stays visible so it can be cleared');
  assert.deepEqual(facetOptions(null, {}), { devices: [], hosts: [] });
});

test('picking a device filters the list on the server, keeps it in the URL, and a permalink brings it back', async () => {
  const { store, api, url, ctl } = await startController();
  await settle();
  assert.ok(api.calls.includes('devices a'), api.calls.join('\n'));
  assert.equal(store.state.devices.status, 'ready');
  ctl.setFilters({ device: CPU1 });
  ctl.loadGraphExecutionRows(0, 10);
  await settle();
  assert.ok(api.calls.includes(`graph_executions a 0 200 device=${CPU1}`), api.calls.join('\n'));
  assert.equal(store.state.geRows.total, 5, 'the Log rows, on CPU:1');
  assert.ok([0, 1, 2, 3, 4].every((i) => store.state.geRows.item(i)?.device_name === CPU1));
  assert.equal(url.read().device, CPU1);
  // A reload (or a link) with the same URL: the run opens with the device chosen, and its first page asks for it.
  const again = new Store();
  const api2 = new FakeApi();
  const ctl2 = new Controller(again, api2, memUrl(decodeUrlState(encodeUrlState(url.read()))));
  await ctl2.start();
  ctl2.stop();
  assert.deepEqual(again.state.geFilters, { device: CPU1 });
  ctl2.loadGraphExecutionRows(0, 10);
  await settle();
  assert.ok(api2.calls.includes(`graph_executions a 0 200 device=${CPU1}`), api2.calls.join('\n'));
  // Choosing "any device" again clears it from the URL.
  ctl.setFilters({});
  assert.equal(url.read().device, undefined);
});

test('focusing a trace the device hides clears the facet and says so (never silently)', async () => {
  const store = new Store();
  const ctl = new Controller(store, new FakeApi(), memUrl());
  await ctl.start();
  ctl.stop();
  ctl.setFilters({ device: CPU1 });
  ctl.loadGraphExecutionRows(0, 10);
  await settle();
  await ctl.focusGraphExecution(2); // probs, on CPU:0
  assert.deepEqual(store.state.geFilters, {});
  assert.match(store.state.listNote ?? '', /Filters cleared to show trace #2/);
});

test('a permalink with a focus and a device facet restores both, the facet not cleared', async () => {
  const store = new Store();
  const url = memUrl({ run: 'a', focus: { kind: 'graph_execution', index: 3 }, alert: null, device: CPU1 });
  const ctl = new Controller(store, new FakeApi(), url);
  await ctl.start();
  ctl.stop();
  await settle();
  assert.deepEqual(store.state.focus, { kind: 'graph_execution', index: 3 });
  assert.deepEqual(store.state.geFilters, { device: CPU1 });
  assert.equal(store.state.listNote, null);
  assert.equal(url.read().device, CPU1);
});

test("a live run's devices are asked again as it grows, at most every REFRESH_MS, and once when it is read", async () => {
  const store = new Store();
  const api = new FakeApi();
  let now = 0;
  const facets = new DeviceFacets(store, api, () => now);
  store.set({ run: 'a' });
  facets.runShown();
  await settle();
  const asked = () => api.calls.filter((c) => c === 'devices a').length;
  assert.equal(asked(), 1);
  now = REFRESH_MS - 1;
  facets.grew(false);
  assert.equal(asked(), 1, 'not yet');
  facets.grew(true);
  await settle();
  assert.equal(asked(), 2, 'read to its end: at once');
  now += REFRESH_MS;
  facets.grew(false);
  await settle();
  assert.equal(asked(), 3);
});

test('a host of a multi-host run says when it first went non-finite, after the first host', () => {
  const resp: DevicesResponse = {
    run: 'r',
    devices: [
      { device_name: CPU0, host: 'worker-0', graph_executions: 10, executions: 0 },
      { device_name: CPU0, host: 'worker-3', graph_executions: 8, executions: 0 },
      { device_name: CPU0, host: 'worker-5', graph_executions: 4, executions: 0 },
    ],
    hosts: ['worker-0', 'worker-3', 'worker-5'],
    host_facts: [
      { host: 'worker-0', graph_executions: 10, first_nonfinite: { index: 9, wall_time: 12.5, after_first_s: 2.25 } },
      { host: 'worker-3', graph_executions: 8, first_nonfinite: { index: 14, wall_time: 10.25, after_first_s: 0 } },
      { host: 'worker-5', graph_executions: 4, first_nonfinite: null },
    ],
  };
  assert.deepEqual(
    facetOptions(resp, {}).hosts.map((o) => o.label),
    ['worker-0 · NaN/∞ +2.25 s', 'worker-3 · first NaN/∞', 'worker-5'],
  );
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../src/store/store.ts';
import { Controller } from '../src/controller/controller.ts';
import { tensorNpyUrl } from '../src/api/client.ts';
import {
  defaultPlane,
  heatSpec,
  indexOf,
  planeAt,
  valueAt,
  windowAround,
  windowSpec,
  withAxes,
  HEAT,
  SLICE_CAP,
} from '../src/store/tensor_math.ts';
import { alertTarget } from '../src/api/requests.ts';
import { formatValue, valueClass } from '../src/panels/tensor_values/format.ts';
import { FakeApi, memUrl } from './fake_api.ts';

const settle = () => new Promise((r) => setTimeout(r, 10));

test('the default plane is the last two axes; 1-d is one column; 0-d one cell', () => {
  assert.deepEqual(defaultPlane([2, 3, 4]), { rowAxis: 1, colAxis: 2, fixed: [0, 0, 0] });
  assert.deepEqual(defaultPlane([5]), { rowAxis: 0, colAxis: null, fixed: [0] });
  assert.deepEqual(defaultPlane([]), { rowAxis: null, colAxis: null, fixed: [] });
  assert.equal(windowSpec([], defaultPlane([]), { r0: 0, c0: 0, rows: 64, cols: 64 }), '...');
});

test('window and heatmap slices fix the other axes and stay under the server cap', () => {
  const shape = [64, 1024, 1024];
  const p = { ...defaultPlane(shape), fixed: [7, 0, 0] };
  assert.equal(windowSpec(shape, p, { r0: 960, c0: 1000, rows: 64, cols: 64 }), '7,960:1024,1000:1024');
  assert.equal(heatSpec(shape, p), '7,::4,::4');
  const rows = Math.ceil(1024 / 4);
  assert.ok(rows * rows <= SLICE_CAP && rows <= HEAT);
  const q = withAxes(shape, p, 2, 0);
  assert.equal(windowSpec(shape, { ...q, fixed: [7, 5, 0] }, { r0: 0, c0: 0, rows: 2, cols: 3 }), '0:3,5,0:2');
  assert.deepEqual(withAxes(shape, p, 1, 1).colAxis, 0, 'the same axis twice moves the column axis');
});

test('valueAt reads a transposed plane (row axis after the column axis) as numpy returns it', () => {
  const p = { rowAxis: 2, colAxis: 0, fixed: [0, 5, 0] };
  // x[0:2, 5, 0:3] has shape [2, 3] in tensor axis order: rows of the plane are its columns
  const slice = { spec: '0:2,5,0:3', shape: [2, 3], values: [0, 1, 2, 10, 11, 12] };
  const w = { r0: 0, c0: 0, rows: 3, cols: 2 };
  assert.equal(valueAt(slice, p, w, 0, 1), 10);
  assert.equal(valueAt(slice, p, w, 2, 0), 2);
  assert.equal(valueAt(slice, p, w, 3, 0), undefined);
  assert.deepEqual(indexOf(p, 2, 1), [1, 5, 2]);
});

test('a position brings its plane and a window that holds it', () => {
  const shape = [64, 1024, 1024];
  const { plane, row, col } = planeAt(defaultPlane(shape), [9, 700, 1023]);
  assert.deepEqual([plane.fixed[0], row, col], [9, 700, 1023]);
  const w = windowAround(shape, plane, row, col);
  assert.ok(row >= w.r0 && row < w.r0 + w.rows && col >= w.c0 && col < w.c0 + w.cols, JSON.stringify(w));
  assert.equal(w.c0 + w.cols, 1024, 'clamped to the plane');
});

test('opening a tensor loads its summary, inputs, window and heatmap, and focuses the first non-finite position', async () => {
  const api = new FakeApi();
  const store = new Store();
  const ctl = new Controller(store, api, memUrl());
  await ctl.start();
  ctl.stop();
  ctl.tensors.open(alertTarget(api.alert()));
  await settle();
  const v = store.state.tensorView!;
  assert.equal(v.summary.status, 'ready');
  assert.deepEqual(v.focusCell, [1, 2, 3]);
  assert.deepEqual(v.plane?.fixed, [1, 2, 3]);
  assert.ok(v.reveal && v.reveal.row === 2 && v.reveal.col === 3);
  assert.ok(api.calls.includes('tensor graph 7 - 48'), api.calls.join('\n'));
  assert.ok(api.calls.includes('tensor graph 7 1,0:3,0:4 1'), api.calls.join('\n'));
  assert.ok(api.calls.includes('tensor graph 7 1,::1,::1 1'), api.calls.join('\n'));
  assert.equal(v.cells.data?.slice?.values[11], 'NaN');
  assert.equal(v.inputViews.length, 1);
  assert.equal(v.inputViews[0]!.values?.status, 'ready');
  assert.equal(v.npyUrl, tensorNpyUrl('a', { source: 'graph', index: 7, output: null }));
  assert.equal(v.npyUrl, 'tensor.npy?run=a&source=graph&index=7');
  ctl.tensors.setFixed(0, 0);
  await settle();
  assert.ok(api.calls.includes('tensor graph 7 0,0:3,0:4 1'), api.calls.join('\n'));
  ctl.tensors.close();
  assert.equal(store.state.tensorView, null);
});

test('a new run closes the view', async () => {
  const api = new FakeApi();
  const store = new Store();
  const ctl = new Controller(store, api, memUrl());
  await ctl.start();
  ctl.stop();
  ctl.tensors.open({ source: 'eager', index: 1, output: 0 });
  ctl.selectRun('b');
  assert.equal(store.state.tensorView, null);
});

test('values read as numbers, with NaN, infinities and zero marked', () => {
  assert.equal(formatValue('Infinity'), '+∞');
  assert.equal(formatValue(0.1234567), '0.123457');
  assert.equal(formatValue(1e-7), '1.0000e-7');
  assert.equal(valueClass('NaN'), 'v-nan');
  assert.equal(valueClass(0), 'v-zero');
  assert.equal(valueClass(3), '');
});

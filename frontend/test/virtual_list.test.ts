import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SPACER_PX, firstRowAt, firstRowToReveal, maxFirstRow, pagesFor, scrollTopFor, spacerHeight, visibleRange } from '../src/widgets/scroll_math.ts';
import { ListModel } from '../src/widgets/list_model.ts';

const TEN_M = 10_000_000;
const g = { total: TEN_M, rowHeight: 24, viewport: 600 };

test('spacer is capped below the browser height limit at 10 M rows', () => {
  assert.equal(spacerHeight(g), MAX_SPACER_PX);
  assert.ok(MAX_SPACER_PX < 17_000_000, 'below Firefox and Chrome limits');
  assert.equal(spacerHeight({ ...g, total: 100 }), 2400, 'small lists are 1:1');
});

test('scroll position maps linearly and reaches both ends at 10 M rows', () => {
  assert.equal(firstRowAt(0, g), 0);
  const maxTop = spacerHeight(g) - g.viewport;
  assert.equal(firstRowAt(maxTop, g), maxFirstRow(g));
  assert.equal(maxFirstRow(g), TEN_M - 25);
  const mid = firstRowAt(maxTop / 2, g);
  assert.ok(Math.abs(mid - maxFirstRow(g) / 2) < 1);
  // Past the end clamps instead of overshooting.
  assert.equal(firstRowAt(maxTop * 2, g), maxFirstRow(g));
  // The last row is visible at the bottom.
  const { end } = visibleRange(firstRowAt(maxTop, g), g);
  assert.equal(end, TEN_M);
});

test('scrollTopFor inverts firstRowAt', () => {
  for (const row of [0, 1, 12345, 5_000_000, 9_999_000, maxFirstRow(g)]) {
    const back = firstRowAt(scrollTopFor(row, g), g);
    assert.ok(Math.abs(back - row) < 1e-3, `row ${row} -> ${back}`);
  }
});

test('unscaled lists scroll natively (1 px = 1/rowHeight rows)', () => {
  const small = { total: 1000, rowHeight: 24, viewport: 600 };
  assert.equal(firstRowAt(240, small), 10);
  assert.equal(scrollTopFor(10, small), 240);
});

test('only the visible rows are in range, with an offset for fractional rows', () => {
  const r = visibleRange(1_000_000.5, g, 2);
  assert.equal(r.begin, 999_998);
  assert.equal(r.end, 1_000_000 + 25 + 1 + 2);
  assert.ok(r.end - r.begin < 40);
  assert.equal(r.offset, (999_998 - 1_000_000.5) * 24);
});

test('reveal moves minimally, or centres', () => {
  assert.equal(firstRowToReveal(5, 0, g), 0);
  assert.equal(firstRowToReveal(100, 0, g), 100 + 1 - 25);
  assert.equal(firstRowToReveal(50, 100, g), 50);
  assert.equal(firstRowToReveal(9_999_999, 0, g, true), maxFirstRow(g));
  assert.equal(firstRowToReveal(5_000_000, 0, g, true), 5_000_000 - 12.5 + 0.5);
});

test('pagesFor covers a range', () => {
  assert.deepEqual(pagesFor(0, 0, 200), []);
  assert.deepEqual(pagesFor(190, 410, 200), [0, 1, 2]);
});

/** A fake data source of `total` rows, recording every request. */
function fakeSource(total: number) {
  const calls: Array<[number, number]> = [];
  return {
    calls,
    fetch: async (begin: number, end: number) => {
      calls.push([begin, end]);
      const items: number[] = [];
      for (let i = begin; i < Math.min(end, total); i++) items.push(i);
      return { items, total };
    },
  };
}

test('list model at 10 M rows: jump to the end fetches only the pages in view, each ≤ 1000 rows', async () => {
  const src = fakeSource(TEN_M);
  const m = new ListModel<number>(24, src.fetch, 500);
  m.viewport = 600;
  await m.ensureVisible(); // learns the total from page 0
  assert.equal(m.total, TEN_M);
  m.setScrollTop(1e12); // drag the scrollbar to the bottom
  await m.ensureVisible();
  const { begin, end } = m.visible();
  assert.equal(end, TEN_M);
  for (let i = begin; i < end; i++) assert.equal(m.item(i), i);
  assert.ok(src.calls.every(([b, e]) => e - b <= 1000));
  assert.ok(src.calls.length <= 3, `few requests: ${JSON.stringify(src.calls)}`);
});

test('list model: reveal an index in the middle of 10 M rows and keyboard moves', async () => {
  const src = fakeSource(TEN_M);
  const m = new ListModel<number>(24, src.fetch, 200);
  m.viewport = 600;
  m.setTotal(TEN_M);
  m.reveal(7_654_321, true);
  await m.ensureVisible();
  assert.equal(m.item(7_654_321), 7_654_321);
  m.selected = 7_654_321;
  assert.equal(m.moveSelection(1), 7_654_322);
  assert.equal(m.moveSelection(-2), 7_654_320);
  assert.equal(m.moveSelection(Infinity), TEN_M - 1);
  assert.ok(m.firstRow <= TEN_M - 1 && m.firstRow + 25 >= TEN_M - 1);
});

test('list model: invalidate keeps stale rows visible until the refetch lands; reset starts over', async () => {
  let total = 50;
  const m = new ListModel<string>(24, async (b, e) => ({ items: Array.from({ length: Math.max(0, Math.min(e, total) - b) }, (_, k) => `v${total}-${b + k}`), total }), 200);
  m.viewport = 600;
  await m.ensureVisible();
  assert.equal(m.item(3), 'v50-3');
  total = 80;
  m.invalidate();
  assert.equal(m.item(3), 'v50-3', 'old row still shown');
  await m.ensureVisible();
  assert.equal(m.item(3), 'v80-3');
  assert.equal(m.total, 80);
  m.reset();
  assert.equal(m.item(3), undefined);
  assert.equal(m.loadedOnce, false);
});

test('list model: a failing page is reported and not refetched in a loop', async () => {
  let calls = 0;
  const m = new ListModel<number>(24, async () => {
    calls++;
    throw new Error('boom');
  }, 200);
  m.viewport = 600;
  await m.ensureVisible();
  await m.ensureVisible();
  assert.equal(calls, 1);
  assert.equal(m.lastError, 'boom');
  assert.equal(m.pageError(0), 'boom');
  assert.throws(() => new ListModel<number>(24, async () => ({ items: [], total: 0 }), 2000));
});

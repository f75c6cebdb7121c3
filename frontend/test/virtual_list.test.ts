import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_SPACER_PX,
  firstRowAt,
  firstRowToReveal,
  maxFirstRow,
  scrollTopFor,
  spacerHeight,
  visibleRange,
} from '../src/widgets/scroll_math.ts';
import { ListModel } from '../src/widgets/list_model.ts';
import { Store } from '../src/store/store.ts';
import { MAX_CACHED_PAGES, PagedRows } from '../src/store/paged_rows.ts';
import { RowPager, type PageFetch } from '../src/controller/row_pager.ts';

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

test('paged rows: page 0 before the total is known, then the uncached pages covering a range', () => {
  const empty = PagedRows.empty<number>({ key: 'a', pageSize: 200 });
  assert.deepEqual(empty.pagesToFetch(0, 0), [0]);
  const rows = empty.withPage(0, [0, 1], 1000, 1000, 0);
  assert.deepEqual(rows.pagesToFetch(190, 410), [1, 2]);
  assert.deepEqual(rows.withFailure(1, 'boom').pagesToFetch(190, 410), [2], 'a failed page is not asked again');
  assert.deepEqual(rows.invalidated().pagesToFetch(0, 10), [0], 'a stale page is');
  const none = empty.withPage(0, [], 0, 0, 0);
  assert.deepEqual(none.pagesToFetch(0, 0), [], 'an empty data set is not asked again');
  assert.deepEqual(none.invalidated().pagesToFetch(0, 0), [0], 'until it may have grown');
});

/** A fake data source of `total` rows, recording every request. */
function fakeSource(total: number) {
  const calls: Array<[number, number]> = [];
  return {
    calls,
    fetch: async (begin: number, end: number) => {
      calls.push([begin, end]);
      const rows: number[] = [];
      for (let i = begin; i < Math.min(end, total); i++) rows.push(i);
      return { rows, total };
    },
  };
}

const flush = () => new Promise((r) => setImmediate(r));

/**
 * A list wired as in the dashboard: the model asks for rows, a RowPager (the controller's) fetches pages into a
 * store, and each new snapshot becomes the model's source. Here the snapshot lives in a variable, not in State.
 */
function pagedList<T>(fetch: PageFetch<T>, pageSize = 200, viewport = 600) {
  const store = new Store();
  let rows = PagedRows.empty<T>({ key: '', pageSize });
  let model: ListModel<T> | null = null;
  const slot = {
    read: () => rows,
    write: (next: PagedRows<T>) => {
      rows = next;
      model?.setSource(next);
      return {};
    },
  };
  const pager = new RowPager<T>(store, slot, pageSize);
  model = new ListModel<T>(24, (b, e) => pager.request(b, e));
  model.viewport = viewport;
  const open = async (key: string) => {
    slot.write(pager.open(key, fetch));
    await flush();
  };
  return { model, pager, open, rows: () => rows };
}

test('list model at 10 M rows: jump to the end fetches only the pages in view, each ≤ 1000 rows', async () => {
  const src = fakeSource(TEN_M);
  const { model: m, open } = pagedList(src.fetch, 500);
  await open('a'); // the first page is fetched unasked and carries the total
  assert.equal(m.total, TEN_M);
  m.setScrollTop(1e12); // drag the scrollbar to the bottom
  m.ensureVisible();
  await flush();
  const { begin, end } = m.visible();
  assert.equal(end, TEN_M);
  for (let i = begin; i < end; i++) assert.equal(m.item(i), i);
  assert.ok(src.calls.every(([b, e]) => e - b <= 1000));
  assert.ok(src.calls.length <= 3, `few requests: ${JSON.stringify(src.calls)}`);
});

test('list model: reveal an index in the middle of 10 M rows and keyboard moves', async () => {
  const src = fakeSource(TEN_M);
  const { model: m, open } = pagedList(src.fetch, 200);
  await open('a');
  m.reveal(7_654_321, true);
  m.ensureVisible();
  await flush();
  assert.equal(m.item(7_654_321), 7_654_321);
  m.selected = 7_654_321;
  assert.equal(m.moveSelection(1), 7_654_322);
  assert.equal(m.moveSelection(-2), 7_654_320);
  assert.equal(m.moveSelection(Infinity), TEN_M - 1);
  assert.ok(m.firstRow <= TEN_M - 1 && m.firstRow + 25 >= TEN_M - 1);
});

test('list model: invalidate keeps stale rows visible until the refetch lands; a new data set starts over', async () => {
  let total = 50;
  const fetch = async (b: number, e: number) => ({
    rows: Array.from({ length: Math.max(0, Math.min(e, total) - b) }, (_, k) => `v${total}-${b + k}`),
    total,
  });
  const { model: m, pager, open } = pagedList(fetch, 200);
  await open('a');
  assert.equal(m.item(3), 'v50-3');
  total = 80;
  pager.invalidate();
  assert.equal(m.item(3), 'v50-3', 'old row still shown');
  m.ensureVisible();
  await flush();
  assert.equal(m.item(3), 'v80-3');
  assert.equal(m.total, 80);
  await open('b');
  m.reset();
  assert.equal(m.item(3), 'v80-3', 'the new data set fetched its first page unasked');
  assert.equal(m.firstRow, 0);
});

test('list model: an answer for an older data set is dropped', async () => {
  const held: Array<() => void> = [];
  let label = 'old';
  const fetch = (b: number, e: number) => {
    const rows = Array.from({ length: e - b }, () => label);
    return new Promise<{ rows: string[]; total: number }>((resolve) => held.push(() => resolve({ rows, total: 1000 })));
  };
  const { model: m, open } = pagedList<string>(fetch, 200);
  await open('old'); // its first page is held in flight
  label = 'new';
  await open('new');
  held[1]!();
  await flush();
  held[0]!(); // the old data set's answer comes last
  await flush();
  assert.equal(m.item(0), 'new');
});

test('list model: a failing page is reported and not refetched in a loop', async () => {
  let calls = 0;
  const { model: m, open } = pagedList<number>(async () => {
    calls++;
    throw new Error('boom');
  }, 200);
  await open('a');
  m.ensureVisible();
  await flush();
  assert.equal(calls, 1);
  assert.equal(m.lastError, 'boom');
  assert.equal(m.pageError(0), 'boom');
  assert.throws(() => pagedList(async () => ({ rows: [], total: 0 }), 2000));
});

test('paged rows: at most MAX_CACHED_PAGES pages are kept, the farthest from the viewport dropped', async () => {
  const src = fakeSource(TEN_M);
  const { model: m, open, rows } = pagedList(src.fetch, 100);
  await open('a');
  for (let p = 0; p < MAX_CACHED_PAGES + 20; p++) {
    m.setFirstRow(p * 100);
    m.ensureVisible();
    await flush();
  }
  assert.ok(rows().cachedPages() <= MAX_CACHED_PAGES, String(rows().cachedPages()));
  assert.equal(m.item(0), undefined, 'page 0 was the farthest');
  assert.notEqual(m.item((MAX_CACHED_PAGES + 19) * 100), undefined);
});

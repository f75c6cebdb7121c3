import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dtypeShape, healthChips, healthDetail, isNonFinite, numText } from '../src/widgets/health.ts';

const kinds = (h: unknown) => healthChips(h).map((c) => c.kind);

test('every mode renders', () => {
  assert.deepEqual(kinds({ mode: 'NO_TENSOR' }), ['info']);
  assert.deepEqual(kinds({ mode: 'CURT_HEALTH', tensor_id: 1, any_inf_or_nan: true }), ['bad']);
  assert.deepEqual(kinds({ mode: 'CURT_HEALTH', tensor_id: 1, any_inf_or_nan: false }), ['ok']);
  assert.deepEqual(kinds({ mode: 'CONCISE_HEALTH', tensor_id: 1, size: 10, neg_inf: 1, pos_inf: 2, nan: 3 }), [
    'neginf',
    'posinf',
    'nan',
  ]);
  assert.deepEqual(kinds({ mode: 'CONCISE_HEALTH', tensor_id: 1, size: 10, neg_inf: 0, pos_inf: 0, nan: 0 }), ['ok']);
  const full = {
    mode: 'FULL_HEALTH',
    tensor_id: 1,
    device_id: -1,
    dtype: 'float32',
    rank: 2,
    size: 1280,
    neg_inf: 3,
    pos_inf: 0,
    nan: 0,
    neg: 1,
    zero: 2,
    pos: 3,
  };
  assert.deepEqual(kinds(full), ['neginf', 'count', 'count', 'count']);
  assert.equal(healthChips(full)[0]!.text, '-∞ 3');
  assert.deepEqual(dtypeShape(full), { dtype: 'float32', shape: 'rank 2' });
  const shape = {
    mode: 'SHAPE',
    tensor_id: 1,
    dtype: 'int32',
    rank: 2,
    size: 6,
    shape: [2, 3],
    shape_truncated: false,
  };
  assert.deepEqual(kinds(shape), ['info']);
  assert.deepEqual(dtypeShape(shape), { dtype: 'int32', shape: '[2,3]' });
  assert.equal(dtypeShape({ ...shape, shape_truncated: true }).shape, '…,[2,3]');
  const ft = {
    mode: 'FULL_TENSOR',
    dtype: 'float32',
    shape: [2],
    size: 2,
    neg_inf: 0,
    pos_inf: 0,
    nan: 0,
    neg: 0,
    zero: 1,
    pos: 1,
    min: 0,
    max: 'Infinity',
    mean: 0.5,
  };
  assert.deepEqual(kinds(ft), ['count', 'count', 'info']);
  assert.deepEqual(
    healthChips(ft).map((c) => c.text),
    ['0×1', '+×1', '[0, +∞]'],
  );
  assert.deepEqual(kinds({ ...ft, nan: 2 }), ['nan', 'count', 'count', 'info']);
  assert.deepEqual(kinds({ ...ft, neg_inf: null, pos_inf: null, nan: null, dtype: 'string' }), ['info']);
  assert.deepEqual(kinds({ mode: 'EMPTY' }), ['empty']);
  assert.deepEqual(kinds({ mode: 'UNKNOWN', reason: 'x' }), ['unknown']);
});

test('-inf, +inf and NaN chips are distinct kinds (distinct colours)', () => {
  const k = new Set(kinds({ mode: 'CONCISE_HEALTH', tensor_id: 1, size: 9, neg_inf: 1, pos_inf: 1, nan: 1 }));
  assert.equal(k.size, 3);
});

test('garbage renders as unknown and never throws', () => {
  const garbage: unknown[] = [
    null,
    undefined,
    0,
    'NaN',
    [],
    [1, 2],
    {},
    { mode: 7 },
    { mode: 'WHAT' },
    { mode: 'CONCISE_HEALTH' },
    { mode: 'CONCISE_HEALTH', size: 'x', neg_inf: 1, pos_inf: 0, nan: 0 },
    { mode: 'FULL_HEALTH', size: 3, neg_inf: -1, pos_inf: 0, nan: 0 },
    { mode: 'CURT_HEALTH', any_inf_or_nan: 'yes' },
    { mode: 'SHAPE' },
    { mode: 'FULL_TENSOR', neg_inf: 'a' },
    { mode: 'CONCISE_HEALTH', size: 1, neg_inf: Infinity, pos_inf: 0, nan: 0 },
    {
      get mode() {
        throw new Error('hostile');
      },
    },
  ];
  for (const g of garbage) {
    const chips = healthChips(g);
    assert.equal(chips.length, 1, String(typeof g));
    assert.equal(chips[0]!.kind, 'unknown');
    assert.doesNotThrow(() => dtypeShape(g));
  }
});

test('isNonFinite and numText', () => {
  assert.equal(isNonFinite({ mode: 'CURT_HEALTH', tensor_id: 1, any_inf_or_nan: true }), true);
  assert.equal(isNonFinite({ mode: 'NO_TENSOR' }), false);
  assert.equal(numText('-Infinity'), '-∞');
  assert.equal(numText('Infinity'), '+∞');
  assert.equal(numText('NaN'), 'NaN');
  assert.equal(numText(3), '3');
  assert.equal(numText({}), '?');
});

// The tutorial's softmax output: 300 zeros among 1,000. It must not look like a plain green "finite".
const softmax = {
  mode: 'FULL_HEALTH',
  tensor_id: 1,
  device_id: -1,
  dtype: 'float32',
  rank: 2,
  size: 1000,
  neg_inf: 0,
  pos_inf: 0,
  nan: 0,
  neg: 0,
  zero: 300,
  pos: 700,
};

test('FULL_HEALTH shows the zero / negative / positive breakdown, like the reference', () => {
  assert.deepEqual(
    healthChips(softmax).map((c) => c.text),
    ['0×300', '+×700'],
  );
  assert.deepEqual(kinds(softmax), ['count', 'count']);
  const neg = { ...softmax, neg: 1205, zero: 0, pos: 0, neg_inf: 75, size: 1280 };
  assert.deepEqual(
    healthChips(neg).map((c) => c.text),
    ['-∞ 75', '−×1,205'],
  );
});

test('zeros flowing into log / division and negatives into sqrt / log stand out', () => {
  const warn = (h: unknown, opType: string, slot = 0) =>
    healthChips(h, { opType, slot })
      .filter((c) => c.kind === 'warn')
      .map((c) => c.text);
  assert.deepEqual(warn(softmax, 'Log'), ['0×300']);
  assert.deepEqual(warn(softmax, 'RealDiv', 1), ['0×300']);
  assert.deepEqual(warn(softmax, 'RealDiv', 0), []); // a zero numerator is harmless
  assert.deepEqual(warn(softmax, 'Reciprocal'), ['0×300']);
  assert.deepEqual(warn(softmax, 'Rsqrt'), ['0×300']);
  assert.deepEqual(warn(softmax, 'Relu'), []);
  assert.deepEqual(warn(softmax, 'SqrtGrad', 0), ['0×300']); // the gradient of sqrt divides by its output
  assert.deepEqual(warn(softmax, 'SqrtGrad', 1), []);
  const negs = { ...softmax, neg: 4, zero: 0, pos: 996 };
  assert.deepEqual(warn(negs, 'Sqrt'), ['−×4']);
  assert.deepEqual(warn(negs, 'Log'), ['−×4']);
  assert.deepEqual(warn(negs, 'Exp'), []);
  assert.match(healthChips(softmax, { opType: 'Log', slot: 0 })[0]!.title, /300 zeros.*Log/);
});

test('CONCISE_HEALTH says its size; CURT_HEALTH says only any-nonfinite', () => {
  const concise = { mode: 'CONCISE_HEALTH', tensor_id: 1, size: 1000, neg_inf: 0, pos_inf: 0, nan: 0 };
  assert.deepEqual(
    healthChips(concise).map((c) => c.text),
    ['finite ×1,000'],
  );
  assert.deepEqual(
    healthChips({ ...concise, nan: 3 }).map((c) => c.text),
    ['NaN 3'],
  );
});

test('the detail pane lists every count the mode records, and the mode', () => {
  const rows = (h: unknown) => healthDetail(h).map(([k, v]) => `${k}: ${v}`);
  assert.deepEqual(rows({ ...softmax, neg_inf: 75, size: 1280 }), [
    'mode: FULL_HEALTH',
    'dtype: float32',
    'shape: rank 2',
    'size: 1,280 elements',
    '-∞: 75',
    '+∞: 0',
    'NaN: 0',
    'negative: 0',
    'zero: 300',
    'positive: 700',
  ]);
  assert.deepEqual(rows({ mode: 'CONCISE_HEALTH', tensor_id: 1, size: 9, neg_inf: 1, pos_inf: 0, nan: 0 }), [
    'mode: CONCISE_HEALTH',
    'size: 9 elements',
    '-∞: 1',
    '+∞: 0',
    'NaN: 0',
    'zero / negative / positive: not recorded by CONCISE_HEALTH',
  ]);
  assert.deepEqual(rows({ mode: 'CURT_HEALTH', tensor_id: 1, any_inf_or_nan: false }), [
    'mode: CURT_HEALTH',
    'NaN or ∞: none',
    'counts: not recorded by CURT_HEALTH',
  ]);
  assert.deepEqual(rows(null), ['mode: unknown']);
});

test('chips that do not fit: non-finite counts always, others as fit, the rest in an "N more" chip', async () => {
  const { fitChips } = await import('../src/widgets/chip_fit.ts');
  const measure = (t: string) => t.length * 6; // 6 px a character
  const h = {
    mode: 'FULL_HEALTH',
    tensor_id: 1,
    size: 700,
    neg_inf: 0,
    pos_inf: 0,
    nan: 634,
    neg: 66,
    zero: 634,
    pos: 0,
  };
  const chips = healthChips(h);
  assert.deepEqual(
    chips.map((c) => c.text),
    ['NaN 634', '−×66', '0×634'],
  );
  const texts = (w: number | null) => {
    const fit = fitChips(chips, w, measure);
    return [...fit.shown.map((c) => c.text), ...(fit.more ? [fit.more.text] : [])];
  };
  assert.deepEqual(texts(null), ['NaN 634', '−×66', '0×634']); // width not known yet: everything
  assert.deepEqual(texts(500), ['NaN 634', '−×66', '0×634']);
  // One pixel short of all three: "1 more" (worded: "+1" beside "+×66" would read as a count) is wider than the
  // 0×634 chip it would stand for, so the rest goes into "2 more".
  assert.deepEqual(texts(56 + 3 + 38 + 3 + 44), ['NaN 634', '−×66', '0×634']);
  assert.deepEqual(texts(56 + 3 + 38 + 3 + 43), ['NaN 634', '2 more']);
  assert.deepEqual(texts(56 + 3 + 50), ['NaN 634', '2 more']); // just room for the words
  assert.deepEqual(texts(56 + 3 + 49), ['NaN 634', '…']); // not for the words: "…", never a cut chip
  assert.deepEqual(texts(60), ['NaN 634', '…']); // too narrow for any other: the non-finite count stays
  assert.deepEqual(texts(10), ['NaN 634', '…']); // even narrower than the NaN chip: it is never dropped
  const more = fitChips(chips, 60, measure).more!;
  assert.equal(more.kind, 'more'); // its own style (chip-more), not a count chip's
  assert.match(more.title, /−×66: 66 negative elements/);
  assert.match(more.title, /0×634: 634 zeros/);
  // Every chip width the fit promises stays within the width (when the must-show chips fit at all).
  for (let w = 56 + 3 + 20; w < 200; w++) {
    // from the width of "NaN 634" + "…": the fit never overflows
    const fit = fitChips(chips, w, measure);
    const all = [...fit.shown, ...(fit.more ? [fit.more] : [])];
    const used = all.reduce((sum, c, i) => sum + measure(c.text) + 14 + (i ? 3 : 0), 0);
    assert.ok(used <= w, `width ${w}: ${used}`);
  }
});

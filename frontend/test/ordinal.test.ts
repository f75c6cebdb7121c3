/** An op's k-th trace as the report words it: 1st, 2nd, 3rd, 4th, 11th-13th, 21st, 112th. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ordinal } from '../src/widgets/ordinal.ts';

test('ordinals as the report writes them', () => {
  const got = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 112, 1258].map(ordinal);
  assert.deepEqual(got, [
    '1st',
    '2nd',
    '3rd',
    '4th',
    '11th',
    '12th',
    '13th',
    '21st',
    '22nd',
    '101st',
    '112th',
    '1,258th',
  ]);
});

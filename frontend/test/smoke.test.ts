import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as entry from '../src/index.ts';

test('entry module exports render()', () => {
  assert.equal(typeof entry.render, 'function');
});

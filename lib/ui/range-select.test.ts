import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rangeIds } from './range-select';

const rows = [{ id: '9' }, { id: '8', gone: true }, { id: '7' }, { id: '6', gone: true }, { id: '5' }];

test('a shift-click range ticks the rows between, not the greyed ones (as select all), but always the row clicked', () => {
  assert.deepEqual(rangeIds(rows, '9', '5'), ['9', '7', '5']);
  assert.deepEqual(rangeIds(rows, '5', '9'), ['9', '7', '5'], 'upwards too');
  assert.deepEqual(rangeIds(rows, '9', '6'), ['9', '7', '6'], 'a greyed row clicked is ticked, as by a plain click');
  assert.equal(rangeIds(rows, '4', '7'), null, 'from a row no longer listed: no range');
});

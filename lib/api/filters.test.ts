import assert from 'node:assert/strict';
import { test } from 'node:test';
import { filtersFromParams, ignoredFilters } from './filters';

test('filters the address holds but the list cannot use are named, with why; the ones it uses are not', () => {
  const params = new URLSearchParams('status=faild&queue=mail&fingerprint=abc123&id=0x10&type=email.send');
  assert.deepEqual(filtersFromParams(params), { queue: 'mail', type: 'email.send' });
  assert.deepEqual(ignoredFilters(params), [
    { name: 'status', value: 'faild', why: 'not a status' },
    { name: 'id', value: '0x10', why: 'not a job id' },
    { name: 'fingerprint', value: 'abc123', why: 'not an error fingerprint (12 hex digits)' },
  ]);
  assert.deepEqual(ignoredFilters(new URLSearchParams('status=failed&fingerprint=0123456789ab&q=x')), [], 'all understood (q is not a filter of the list)');
  assert.deepEqual(ignoredFilters(new URLSearchParams('status=%20')), [], 'an empty value is no filter');
});

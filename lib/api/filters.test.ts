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
  assert.deepEqual(ignoredFilters(new URLSearchParams('status=failed&fingerprint=0123456789ab&focus=search')), [], 'all understood');
  assert.deepEqual(ignoredFilters(new URLSearchParams('status=failed&search=timeout&statu=queued')), [
    { name: 'search', value: 'timeout', why: 'not a filter of this list' },
    { name: 'statu', value: 'queued', why: 'not a filter of this list' },
  ]);
  assert.deepEqual(ignoredFilters(new URLSearchParams('status=%20')), [], 'an empty value is no filter');
});

test("the API's free search q is the list's too: a job id, else text in the last error", () => {
  assert.deepEqual(filtersFromParams(new URLSearchParams('q=42')), { id: '42' });
  assert.deepEqual(filtersFromParams(new URLSearchParams('q=%20SMTP%20421&status=failed')), { status: 'failed', error: 'SMTP 421' });
  assert.deepEqual(filtersFromParams(new URLSearchParams('q=timeout&error=busy')), { error: 'busy' }, 'an explicit filter wins');
  assert.deepEqual(ignoredFilters(new URLSearchParams('q=no-such-error')), []);
});

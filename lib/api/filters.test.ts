import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSince, sinceText } from '../since';
import { filtersFromParams, filtersToQuery, ignoredFilters } from './filters';
import { LAST_PRIORITY } from './priority';

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

test('time filters: a span or an ISO moment is kept; anything else is said as ignored', () => {
  const p = new URLSearchParams('status=failed&finishedSince=1h&createdSince=2026-12-03T13:00:00Z');
  assert.deepEqual(filtersFromParams(p), { status: 'failed', finishedSince: '1h', createdSince: '2026-12-03T13:00:00Z' });
  assert.equal(filtersToQuery(filtersFromParams(p)), 'status=failed&createdSince=2026-12-03T13%3A00%3A00Z&finishedSince=1h');
  const bad = new URLSearchParams('finishedSince=yesterday&createdSince=1w');
  assert.deepEqual(filtersFromParams(bad), {});
  assert.deepEqual(
    ignoredFilters(bad).map((i) => i.name),
    ['createdSince', 'finishedSince'],
  );
  assert.deepEqual(parseSince('90m'), { span: true, ms: 5_400_000 });
  assert.deepEqual(parseSince('7d'), { span: true, ms: 604_800_000 });
  assert.equal(parseSince('2026-12-03T13:00:00'), null, 'a moment without its offset is ambiguous');
  assert.equal(parseSince('2026-13-45T13:00:00Z'), null, 'not a date');
  assert.equal(sinceText('1h'), 'in the last hour');
  assert.equal(sinceText('2026-12-03T13:00:00+01:00'), 'since 2026-12-03 12:00 UTC');
});

test('a least number of attempts: 1-100 is kept and written back; anything else is said as ignored', () => {
  assert.deepEqual(filtersFromParams(new URLSearchParams('status=completed&minAttempts=2')), { status: 'completed', minAttempts: '2' });
  assert.equal(filtersToQuery({ status: 'completed', minAttempts: '2' }), 'status=completed&minAttempts=2');
  for (const bad of ['0', '02', '101', '2.5', '-1', 'two']) {
    assert.deepEqual(filtersFromParams(new URLSearchParams(`minAttempts=${bad}`)), {}, bad);
    assert.deepEqual(ignoredFilters(new URLSearchParams(`minAttempts=${bad}`)), [{ name: 'minAttempts', value: bad, why: 'not a number of attempts (1-100)' }], bad);
  }
  assert.deepEqual(filtersFromParams(new URLSearchParams('minAttempts=100')), { minAttempts: '100' });
});

test('a priority: every level is kept and written back; anything else is said as ignored', () => {
  for (let p = 0; p <= LAST_PRIORITY; p++) assert.deepEqual(filtersFromParams(new URLSearchParams(`status=queued&priority=${p}`)), { status: 'queued', priority: String(p) });
  assert.equal(filtersToQuery({ status: 'queued', priority: '7' }), 'status=queued&priority=7');
  for (const bad of [String(LAST_PRIORITY + 1), '-1', '1.5', 'high', '07']) {
    assert.deepEqual(filtersFromParams(new URLSearchParams(`priority=${bad}`)), {}, bad);
    assert.deepEqual(ignoredFilters(new URLSearchParams(`priority=${bad}`)), [{ name: 'priority', value: bad, why: 'not a priority (0-9)' }], bad);
  }
});

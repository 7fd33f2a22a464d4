import assert from 'node:assert/strict';
import { test } from 'node:test';
import { filterSql, parsePayloadFilter, SqlParams } from './filters';

test('payload filters: a key path, or a path and a JSON scalar (else a string)', () => {
  assert.deepEqual(parsePayloadFilter('account'), { path: ['account'] });
  assert.deepEqual(parsePayloadFilter('order.id=ord_7'), { path: ['order', 'id'], value: 'ord_7' });
  assert.deepEqual(parsePayloadFilter('account=42'), { path: ['account'], value: 42 });
  assert.deepEqual(parsePayloadFilter('flag=true'), { path: ['flag'], value: true });
  assert.deepEqual(parsePayloadFilter('name="42"'), { path: ['name'], value: '42' });
  for (const bad of ['', 'a..b', '.a', 'a b=1', "a'=1", 'a.b.c.d.e.f.g.h.i=1']) assert.equal(parsePayloadFilter(bad), null, bad);
});

test('filters become parameterised conditions; only unindexed ones ask for a windowed scan', () => {
  const p = new SqlParams();
  const { conds, scans } = filterSql({ status: 'failed', queue: "q'; DROP TABLE jobs; --", payload: 'a.b=1', error: '50%_off' }, p, 'fp(error)');
  assert.equal(scans, true);
  assert.ok(conds.every((c) => !c.includes('DROP')), 'values are parameters, never SQL text');
  assert.deepEqual(p.values, ['failed', "q'; DROP TABLE jobs; --", '%50\\%\\_off%', '{"a":{"b":1}}']);
  assert.equal(filterSql({ status: 'failed' }, new SqlParams(), 'fp').scans, false);
  assert.equal(filterSql({ status: 'running', worker: 'w' }, new SqlParams(), 'fp').scans, false);
  assert.equal(filterSql({ queue: 'q', id: '5' }, new SqlParams(), 'fp').scans, false, 'an id pins the row');
  const attempts = new SqlParams();
  const least = filterSql({ status: 'completed', minAttempts: '2' }, attempts, 'fp');
  assert.deepEqual([least.conds, attempts.values, least.scans], [['status = $1::job_status', 'attempt_count >= $2::int'], ['completed', '2'], true]);
});

test('q: a number too large for a bigint is searched as text, never cast to a job id', () => {
  const asId = new SqlParams();
  assert.match(filterSql({ q: '9223372036854775807' }, asId, 'fp').conds[0]!, /job_id = \$1::bigint/);
  const asText = new SqlParams();
  const r = filterSql({ q: '9223372036854775808' }, asText, 'fp');
  assert.match(r.conds[0]!, /error ILIKE/);
  assert.equal(r.scans, true);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QueueError } from '../queue/errors';
import { zodMessage } from './respond';
import { enqueueBody, historyQuery, jobId, jsonProblem, listQuery, toEnqueueInput } from './schemas';

test('jsonProblem finds what jsonb cannot store, anywhere in the value', () => {
  assert.equal(jsonProblem({ a: [1, { b: 'ok' }] }), null);
  assert.match(jsonProblem({ a: [{ b: 'x\u0000' }] })!, /NUL/);
  assert.match(jsonProblem({ ['k\u0000']: 1 })!, /NUL/);
  assert.match(jsonProblem(['\udc00'])!, /surrogate/);
  assert.equal(jsonProblem('\ud83d\ude00'), null, 'a valid pair is fine');
  let deep: unknown = 1;
  for (let i = 0; i < 70; i++) deep = [deep];
  assert.match(jsonProblem(deep)!, /nested/);
});

test('jsonProblem refuses numbers JSON.parse could not keep exactly', () => {
  // What the parser made of {"id":12345678901234567890,"x":1e400}: a rounded id and Infinity.
  const parsed = { parsed: true };
  assert.match(jsonProblem(JSON.parse('{"id":12345678901234567890}'), parsed)!, /send integers beyond ±2\^53 as strings/);
  assert.match(jsonProblem(JSON.parse('{"a":[{"x":1e400}]}'), parsed)!, /beyond the range of a double/);
  assert.match(jsonProblem(JSON.parse('-1e400'), parsed)!, /beyond the range of a double/);
  assert.match(jsonProblem([-9007199254740992], parsed)!, /±2\^53/);
  assert.equal(jsonProblem(2 ** 60), null, 'a value a handler built is kept exactly (a checkpoint)');
  assert.match(jsonProblem(NaN)!, /double/);
  for (const ok of [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 0, -0, 1.5, 0.1, 5e-324, 123456.789, { n: '12345678901234567890' }]) {
    assert.equal(jsonProblem(ok), null, String(ok));
  }
});

test('toEnqueueInput checks the type and its payload schema', () => {
  const ok = toEnqueueInput(enqueueBody.parse({ type: 'demo.sleep', payload: { ms: 5 }, runAt: '2030-01-01T00:00:00+02:00' }));
  assert.equal(ok.runAt!.toISOString(), '2029-12-31T22:00:00.000Z');
  assert.throws(() => toEnqueueInput(enqueueBody.parse({ type: 'nope' })), (e: QueueError) => e.code === 'unknown_type');
  assert.throws(
    () => toEnqueueInput(enqueueBody.parse({ type: 'demo.sleep', payload: { ms: 'soon' } })),
    (e: QueueError) => e.code === 'invalid_request' && /payload\.ms/.test(e.message),
  );
});

test('runAt: a date-time that does not exist is refused, never rolled over into another day', () => {
  const runAt = (s: string) => enqueueBody.safeParse({ type: 'demo.noop', runAt: s });
  for (const bad of [
    '2026-02-30T00:00:00Z',
    '2026-04-31T12:00:00+02:00',
    '2025-02-29T00:00:00Z', // 2025 is not a leap year
    '1900-02-29T00:00:00-0500', // nor is 1900
    '2026-01-01T24:00:00Z',
    '2026-01-01T24:00+01:00',
    '2026-01-01T25:00:00Z',
    '2026-06-31T10:00:00.123-07:00',
  ]) {
    const r = runAt(bad);
    assert.equal(r.success, false, bad);
    assert.match(r.error!.issues[0]!.message, /ISO 8601/, bad);
  }
  for (const [ok, utc] of [
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29T23:59:59.5-05:00', '2000-03-01T04:59:59.500Z'],
    ['2026-04-30T00:30+0100', '2026-04-29T23:30:00.000Z'],
    ['2026-12-31T23:59:59-12:00', '2027-01-01T11:59:59.000Z'],
  ]) {
    const r = runAt(ok!);
    assert.equal(r.success, true, ok);
    assert.equal(r.data!.runAt!.toISOString(), utc);
  }
});

test('jobId: a positive integer that fits a bigint (a larger one is a 400 here, not a 500 from SQL)', () => {
  for (const ok of ['1', '42', '9223372036854775807']) assert.equal(jobId.safeParse(ok).success, true, ok);
  for (const bad of ['0', '-1', '01', 'abc', '1.5', '9223372036854775808', '9999999999999999999', '12345678901234567890']) {
    assert.equal(jobId.safeParse(bad).success, false, bad);
  }
});

test("a payload filter's value and the history range say what is wrong with them, once", () => {
  const payload = (v: string) => zodMessage(listQuery.safeParse({ payload: v }).error!);
  assert.equal(payload('a=1e400'), 'payload: the value contains a number beyond the range of a double (send it as a string)');
  assert.equal(payload('a="\\u0000"'), 'payload: the value contains a NUL character (\\u0000), which PostgreSQL cannot store');
  assert.equal(payload('a="\\ud800"'), 'payload: the value contains invalid Unicode (a lone surrogate)');
  assert.equal(payload('a=1e-400'), 'payload: the value has a number too small for a double (1e-400), which would be read as 0: send it as a string');
  assert.equal(listQuery.safeParse({ payload: 'a=1e300' }).success, true);
  assert.equal(listQuery.safeParse({ payload: 'a=0e-400' }).success, true, 'a zero sent as one');
  assert.equal(zodMessage(historyQuery.safeParse({ range: '1y' }).error!), 'range: must be 24h or 7d');
});

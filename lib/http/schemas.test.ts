import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QueueError } from '../queue/errors';
import { enqueueBody, jsonProblem, toEnqueueInput } from './schemas';

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

test('toEnqueueInput checks the type and its payload schema', () => {
  const ok = toEnqueueInput(enqueueBody.parse({ type: 'demo.sleep', payload: { ms: 5 }, runAt: '2030-01-01T00:00:00+02:00' }));
  assert.equal(ok.runAt!.toISOString(), '2029-12-31T22:00:00.000Z');
  assert.throws(() => toEnqueueInput(enqueueBody.parse({ type: 'nope' })), (e: QueueError) => e.code === 'unknown_type');
  assert.throws(
    () => toEnqueueInput(enqueueBody.parse({ type: 'demo.sleep', payload: { ms: 'soon' } })),
    (e: QueueError) => e.code === 'invalid_request' && /payload\.ms/.test(e.message),
  );
});

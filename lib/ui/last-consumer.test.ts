import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queuesOnlyServedBy } from './last-consumer';

const w = (workerId: string, queues: string[], o: { stopped?: boolean; stale?: boolean; quiet?: boolean } = {}) => ({
  workerId,
  queues,
  stoppedAt: o.stopped ? '2026-12-06T00:00:00Z' : null,
  stale: !!o.stale,
  quietAt: o.quiet ? '2026-12-06T00:00:00Z' : null,
});

test('the queues a worker alone claims from: another live, unquieted worker on a queue takes it off the list', () => {
  const workers = [
    w('a', ['default', 'emails', 'reports']),
    w('b', ['default']),
    w('c', ['emails'], { quiet: true }),
    w('d', ['reports'], { stale: true }),
    w('e', ['reports'], { stopped: true }),
  ];
  assert.deepEqual(queuesOnlyServedBy(workers, 'a'), ['emails', 'reports']);
  assert.deepEqual(queuesOnlyServedBy(workers, 'b'), []);
  assert.deepEqual(queuesOnlyServedBy(workers, 'nobody'), []);
});

/**
 * A dead worker's jobs (the workers page's "its jobs" link, the worker filter): those it ran
 * last, and those it held when it died. The latter are taken over by another worker, whose id
 * their rows then carry; only their lost attempts still name the dead one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../../test/db';
import { waitFor } from '../../test/wait';
import * as ops from './ops';
import { listJobs } from './read';

const db = await testDatabase();
const queue = 'lost-by';

test("a worker's jobs: the one it completed, those taken over from it (whatever became of them), not another worker's", async () => {
  const enqueued = await ops.jobEnqueue(db.pool, [0, 1, 2, 3].map((i) => ({ queue, type: 'demo.noop', payload: { i } })));
  const [done, lostA, lostB, other] = enqueued.map((e) => e.id) as [string, string, string, string];
  const [first] = await ops.jobClaim(db.pool, { workerId: 'dead', leaseMs: 60_000, ids: [done] });
  assert.deepEqual([...(await ops.jobComplete(db.pool, { workerId: 'dead', items: [{ jobId: first!.id, attempt: first!.attemptCount }] }))], [done]);
  // It claims two more and dies holding them: a lease of 1 ms runs out by the database's clock.
  assert.equal((await ops.jobClaim(db.pool, { workerId: 'dead', leaseMs: 1, ids: [lostA, lostB] })).length, 2);
  const taken = await waitFor('the takeover of both expired leases', async () => {
    const got = await ops.jobClaimExpired(db.pool, { queue, workerId: 'heir', leaseMs: 60_000, limit: 2 });
    return got.length === 2 && got;
  });
  const a = taken.find((j) => j.id === lostA)!;
  await ops.jobComplete(db.pool, { workerId: 'heir', items: [{ jobId: a.id, attempt: a.attemptCount }] });
  const [o] = await ops.jobClaim(db.pool, { workerId: 'heir', leaseMs: 60_000, ids: [other] });
  await ops.jobComplete(db.pool, { workerId: 'heir', items: [{ jobId: o!.id, attempt: o!.attemptCount }] });

  const ids = async (f: Omit<Parameters<typeof listJobs>[1], 'limit'>) => (await listJobs(db.pool, { ...f, limit: 50 })).jobs.map((j) => j.id).sort();
  assert.deepEqual(await ids({ worker: 'dead' }), [done, lostA, lostB].sort(), 'its completed job and both it lost, one completed and one running elsewhere');
  assert.deepEqual(await ids({ worker: 'dead', status: 'completed' }), [done, lostA].sort());
  assert.deepEqual(await ids({ worker: 'dead', status: 'running' }), [], 'running means running on it: the job it lost runs on the heir');
  assert.deepEqual(await ids({ worker: 'heir', status: 'running' }), [lostB]);
  assert.deepEqual(await ids({ worker: 'heir' }), [lostA, lostB, other].sort(), 'the heir lost nothing: only what it runs or ran');
});

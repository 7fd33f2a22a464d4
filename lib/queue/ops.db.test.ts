/**
 * Every statement against a real PostgreSQL: a positive case and a negative case per
 * guard. Rows are put in any state with factories; time moves by data (backdated leases),
 * never by waiting.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { insertJob, jobRow } from '../../test/factories';
import { testDatabase, type TestDb } from '../../test/db';
import { waitFor } from '../../test/wait';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPool } from '../db/client';
import { FsResultStore, type ResultStore } from '../results';
import { createLogger } from '../log';
import { REDIS_URL } from '../../test/env';
import { uniquePrefix } from '../../test/processes';
import { RedisDoorbell } from './signal';
import * as ops from './ops';
import { nextTick } from './cron';

const db: TestDb = await testDatabase();

const W1 = 'host-a:100:aaaaaa';
const W2 = 'host-b:200:bbbbbb';
const LEASE = 30_000;

describe('jobEnqueue', () => {
  test('inserts queued jobs and reports each id in input order', async () => {
    const res = await ops.jobEnqueue(db.pool, [
      { type: 'demo.noop', payload: { a: 1 } },
      { type: 'demo.sleep', payload: { ms: 5 }, queue: 'q2', maxAttempts: 7 },
    ]);
    assert.equal(res.length, 2);
    const a = await jobRow(db.pool, res[0]!.id);
    const b = await jobRow(db.pool, res[1]!.id);
    assert.equal(a.type, 'demo.noop');
    assert.deepEqual(a.payload, { a: 1 });
    assert.equal(b.queue, 'q2');
    assert.equal(b.max_attempts, 7);
    assert.equal(b.attempt_budget, 7);
    assert.equal(a.status, 'queued');
  });

  test('a runAt in the past is due now: its wait counts from the enqueue, not from that date', async () => {
    const hourAgo = new Date(Date.now() - 3_600_000);
    const [one] = await ops.jobEnqueue(db.pool, [{ type: 'demo.noop', queue: 'past-q', runAt: hourAgo }]); // the single-row INSERT
    const many = await ops.jobEnqueue(db.pool, [1, 2].map(() => ({ type: 'demo.noop', queue: 'past-q', runAt: hourAgo }))); // the batch
    const ids = [one!.id, ...many.map((r) => r.id)];
    const { rows } = await db.pool.query(`SELECT run_at >= created_at AS from_enqueue FROM jobs WHERE job_id = ANY($1::bigint[])`, [ids]);
    assert.deepEqual(rows.map((r) => r.from_enqueue), [true, true, true]);
    const claimed = await ops.jobClaim(db.pool, { ids, workerId: W1, leaseMs: LEASE });
    assert.equal(claimed.length, 3, 'due at once');
    for (const j of claimed) assert.ok(j.waitedMs < 600_000, `waited ${j.waitedMs} ms, not the hour before its runAt`);
  });

  test('returns the existing id for a repeated idempotency key and inserts nothing', async () => {
    const [first] = await ops.jobEnqueue(db.pool, [{ type: 'demo.noop', idempotencyKey: 'k-repeat' }]);
    const again = await ops.jobEnqueue(db.pool, [
      { type: 'demo.noop', idempotencyKey: 'k-repeat' },
      { type: 'demo.noop', idempotencyKey: 'k-repeat' },
    ]);
    assert.equal(first!.created, true);
    assert.deepEqual(again.map((r) => [r.id, r.created]), [
      [first!.id, false],
      [first!.id, false],
    ]);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = 'k-repeat'`);
    assert.equal(rows[0].n, 1);
  });

  test('50 concurrent enqueues with one key on separate connections give one row and one id', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, () => ops.jobEnqueue(db.pool, [{ type: 'demo.noop', idempotencyKey: 'k-race' }])),
    );
    const ids = new Set(results.map((r) => r[0]!.id));
    assert.equal(ids.size, 1);
    assert.equal(results.filter((r) => r[0]!.created).length, 1);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = 'k-race'`);
    assert.equal(rows[0].n, 1);
  });

  test('a future run_at is not due', async () => {
    const [r] = await ops.jobEnqueue(db.pool, [{ type: 'demo.noop', runAt: new Date(Date.now() + 3_600_000) }]);
    const claimed = await ops.jobClaim(db.pool, { ids: [r!.id], workerId: W1, leaseMs: LEASE });
    assert.equal(claimed.length, 0);
  });
});

describe('jobClaim', () => {
  test('claims a queued job: running, owner, lease, attempt 1', async () => {
    const id = await insertJob(db.pool);
    const [job] = await ops.jobClaim(db.pool, { ids: [id], workerId: W1, leaseMs: LEASE });
    assert.equal(job!.status, 'running');
    assert.equal(job!.workerId, W1);
    assert.equal(job!.attemptCount, 1);
    const row = await jobRow(db.pool, id);
    const leaseMs = row.lease_expires_at.getTime() - row.heartbeat_at.getTime();
    assert.equal(leaseMs, LEASE);
  });

  test('does not take a running job with a live lease', async () => {
    const id = await insertJob(db.pool, { status: 'running', workerId: W1, leaseInMs: 60_000 });
    assert.equal((await ops.jobClaim(db.pool, { ids: [id], workerId: W2, leaseMs: LEASE })).length, 0);
  });

  test('takes over a running job whose lease expired and records the lost attempt', async () => {
    const id = await insertJob(db.pool, { status: 'running', workerId: W1, leaseInMs: -1_000, attemptCount: 1 });
    const [job] = await ops.jobClaim(db.pool, { ids: [id], workerId: W2, leaseMs: LEASE });
    assert.equal(job!.workerId, W2);
    assert.equal(job!.attemptCount, 2);
    const { rows } = await db.pool.query('SELECT attempt, worker_id, outcome FROM job_attempts WHERE job_id = $1 ORDER BY attempt', [id]);
    assert.deepEqual(rows, [
      { attempt: 1, worker_id: W1, outcome: 'lease_lost' },
      { attempt: 2, worker_id: W2, outcome: null }, // the attempt now in progress
    ]);
  });

  test('never takes a job whose attempts are used up, even with an expired lease', async () => {
    const id = await insertJob(db.pool, { status: 'running', leaseInMs: -1_000, attemptCount: 3, maxAttempts: 3 });
    assert.equal((await ops.jobClaim(db.pool, { ids: [id], workerId: W2, leaseMs: LEASE })).length, 0);
  });

  test('does not take a job with a cancel request, a future run_at, or a terminal status', async () => {
    const ids = [
      await insertJob(db.pool, { status: 'running', leaseInMs: -1_000, cancelRequested: true }),
      await insertJob(db.pool, { status: 'retrying', runInMs: 60_000 }),
      await insertJob(db.pool, { status: 'completed' }),
      await insertJob(db.pool, { status: 'failed' }),
      await insertJob(db.pool, { status: 'cancelled', cancelRequested: true }),
    ];
    assert.equal((await ops.jobClaim(db.pool, { ids, workerId: W2, leaseMs: LEASE })).length, 0);
  });

  test('20 concurrent claims of one job on separate connections: exactly one wins', async () => {
    const id = await insertJob(db.pool);
    const clients = await Promise.all(Array.from({ length: 20 }, () => db.pool.connect()));
    try {
      const results = await Promise.all(
        clients.map((c, k) => ops.jobClaim(c, { ids: [id], workerId: `racer-${k}`, leaseMs: LEASE })),
      );
      const winners = results.filter((r) => r.length === 1);
      assert.equal(winners.length, 1);
      const row = await jobRow(db.pool, id);
      assert.equal(row.worker_id, winners[0]![0]!.workerId);
      assert.equal(row.attempt_count, 1);
    } finally {
      clients.forEach((c) => c.release());
    }
  });

  test('racing batch claims over the same 100 jobs claim each exactly once', async () => {
    const ids = await Promise.all(Array.from({ length: 100 }, () => insertJob(db.pool, { queue: 'race-batch' })));
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, k) => ops.jobClaim(db.pool, { ids: [...ids].reverse(), workerId: `b-${k}`, leaseMs: LEASE })),
    );
    const claimed = results.flat().map((j) => j.id);
    assert.equal(new Set(claimed).size, claimed.length);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n, max(attempt_count) AS m FROM jobs WHERE queue = 'race-batch' AND status = 'running'`);
    assert.equal(rows[0].n, claimed.length);
    assert.equal(rows[0].m, 1);
  });
});

describe('jobClaimNext', () => {
  test('claims the oldest due jobs of the queue, skipping future and other queues', async () => {
    const old = await insertJob(db.pool, { queue: 'cn', runInMs: -5_000 });
    const newer = await insertJob(db.pool, { queue: 'cn', runInMs: -1_000 });
    await insertJob(db.pool, { queue: 'cn', runInMs: 60_000 });
    await insertJob(db.pool, { queue: 'other', runInMs: -10_000 });
    const jobs = await ops.jobClaimNext(db.pool, { queue: 'cn', limit: 10, workerId: W1, leaseMs: LEASE });
    assert.deepEqual(jobs.map((j) => j.id), [old, newer]);
  });

  test('concurrent pollers never claim the same job twice', async () => {
    await Promise.all(Array.from({ length: 60 }, () => insertJob(db.pool, { queue: 'cn-race' })));
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, k) => ops.jobClaimNext(db.pool, { queue: 'cn-race', limit: 15, workerId: `p-${k}`, leaseMs: LEASE })),
    );
    const ids = results.flat().map((j) => j.id);
    assert.equal(new Set(ids).size, ids.length);
  });
});

describe('fenced writes (heartbeat, complete, fail)', () => {
  async function claimed(workerId = W1) {
    const id = await insertJob(db.pool);
    const [job] = await ops.jobClaim(db.pool, { ids: [id], workerId, leaseMs: LEASE });
    return { id, lease: { jobId: id, attempt: job!.attemptCount } };
  }

  test('heartbeat renews the lease of the owner and reports a cancel request', async () => {
    const { id, lease } = await claimed();
    await db.pool.query(`UPDATE jobs SET lease_expires_at = now() + interval '1 second' WHERE job_id = $1`, [id]);
    const r = await ops.jobHeartbeat(db.pool, { workerId: W1, leaseMs: LEASE, leases: [lease] });
    assert.deepEqual(r.renewed.get(id), { cancelRequested: false });
    const row = await jobRow(db.pool, id);
    assert.ok(row.lease_expires_at.getTime() - Date.now() > 20_000);
    await ops.jobCancel(db.pool, { ids: [id] });
    const r2 = await ops.jobHeartbeat(db.pool, { workerId: W1, leaseMs: LEASE, leases: [lease] });
    assert.deepEqual(r2.renewed.get(id), { cancelRequested: true });
  });

  test('heartbeat with a stale attempt or another worker id renews nothing', async () => {
    const { id, lease } = await claimed();
    const stale = await ops.jobHeartbeat(db.pool, { workerId: W1, leaseMs: LEASE, leases: [{ ...lease, attempt: lease.attempt + 1 }] });
    const other = await ops.jobHeartbeat(db.pool, { workerId: W2, leaseMs: LEASE, leases: [lease] });
    assert.equal(stale.renewed.size, 0);
    assert.equal(other.renewed.size, 0);
    assert.deepEqual([stale.busy.size, other.busy.size], [0, 0], 'not owned is not busy');
    assert.equal((await jobRow(db.pool, id)).status, 'running');
  });

  test('heartbeat of a job whose row is gone reports it lost, not busy (its handler is stopped)', async () => {
    const { id, lease } = await claimed();
    await db.pool.query('DELETE FROM jobs WHERE job_id = $1', [id]);
    const r = await ops.jobHeartbeat(db.pool, { workerId: W1, leaseMs: LEASE, leases: [lease] });
    assert.deepEqual([r.renewed.size, r.busy.size], [0, 0]);
  });

  test('heartbeat does not wait for a row another transaction holds: that job is busy, the others are renewed', async () => {
    const a = await claimed();
    const b = await claimed();
    const holder = await db.pool.connect();
    // A client-side limit far below the holder's hold (it never lets go before the heartbeat returns).
    const hb = createPool(db.url, { name: 'hb-test', max: 1, queryTimeoutMs: 5_000 });
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM jobs WHERE job_id = $1 FOR UPDATE', [a.id]);
      const r = await ops.jobHeartbeat(hb, {
        workerId: W1,
        leaseMs: LEASE,
        leases: [a.lease, b.lease],
      });
      assert.deepEqual([...r.busy], [a.id]);
      assert.deepEqual([...r.renewed.keys()], [b.id]);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
      await hb.end();
    }
    const after = await ops.jobHeartbeat(db.pool, { workerId: W1, leaseMs: LEASE, leases: [a.lease] });
    assert.deepEqual([after.busy.size, after.renewed.has(a.id)], [0, true], 'renewed once the row is free');
  });

  test('complete by the owner: completed, lease cleared, attempt recorded', async () => {
    const { id, lease } = await claimed();
    const ok = await ops.jobComplete(db.pool, { workerId: W1, items: [lease] });
    assert.ok(ok.has(id));
    const row = await jobRow(db.pool, id);
    assert.equal(row.status, 'completed');
    assert.equal(row.lease_expires_at, null);
    assert.ok(row.finished_at);
    const { rows } = await db.pool.query('SELECT outcome, worker_id FROM job_attempts WHERE job_id = $1', [id]);
    assert.deepEqual(rows, [{ outcome: 'completed', worker_id: W1 }]);
    // A second completion by the same owner changes nothing.
    assert.equal((await ops.jobComplete(db.pool, { workerId: W1, items: [lease] })).size, 0);
  });

  test('does not complete a job whose lease was taken over; the new owner\'s outcome stands', async () => {
    const { id, lease: old } = await claimed(W1);
    await db.pool.query(`UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE job_id = $1`, [id]);
    const [taken] = await ops.jobClaim(db.pool, { ids: [id], workerId: W2, leaseMs: LEASE });
    assert.equal(taken!.attemptCount, 2);
    assert.equal((await ops.jobHeartbeat(db.pool, { workerId: W1, leaseMs: LEASE, leases: [old] })).renewed.size, 0);
    assert.equal((await ops.jobComplete(db.pool, { workerId: W1, items: [old] })).size, 0);
    assert.equal((await ops.jobFail(db.pool, { workerId: W1, items: [{ ...old, error: 'stale', backoffMs: 0 }] })).size, 0);
    assert.ok((await ops.jobComplete(db.pool, { workerId: W2, items: [{ jobId: id, attempt: 2 }] })).has(id));
    const row = await jobRow(db.pool, id);
    assert.equal(row.status, 'completed');
    assert.equal(row.worker_id, W2);
    // Even the same worker id cannot write with an old attempt number.
    assert.equal((await ops.jobComplete(db.pool, { workerId: W2, items: [{ jobId: id, attempt: 1 }] })).size, 0);
  });

  test('a requeued completed job runs from the start; a requeued failed one resumes from its checkpoints', async () => {
    const checkpointed = async (end: 'complete' | 'fail') => {
      const { id, lease } = await claimed();
      assert.equal(await ops.jobCheckpoint(db.pool, { workerId: W1, lease, name: 'step', value: 3 }), true);
      if (end === 'complete') assert.ok((await ops.jobComplete(db.pool, { workerId: W1, items: [lease] })).has(id));
      else await ops.jobFail(db.pool, { workerId: W1, items: [{ ...lease, error: 'boom', backoffMs: 0, permanent: true }] });
      return id;
    };
    const done = await checkpointed('complete');
    const failed = await checkpointed('fail');
    assert.equal((await jobRow(db.pool, failed)).status, 'failed');
    assert.equal((await ops.jobRequeue(db.pool, { ids: [done, failed] })).changed, 2);
    const again = await ops.jobClaim(db.pool, { ids: [done, failed], workerId: W2, leaseMs: LEASE });
    const checkpoints = Object.fromEntries(again.map((j) => [j.id, j.checkpoints]));
    assert.equal(checkpoints[done], null, 'the completed run is over: its next run starts from the first step');
    assert.equal(checkpoints[failed]?.step?.value, 3, 'the failed run resumes where it stopped');
  });

  test('fail with attempts left: retrying with run_at = now() + backoff (database clock)', async () => {
    const { id, lease } = await claimed();
    const r = await ops.jobFail(db.pool, { workerId: W1, items: [{ ...lease, error: 'boom', stack: 'Error: boom\n  at x', backoffMs: 60_000 }] });
    assert.equal(r.get(id)!.status, 'retrying');
    const { rows } = await db.pool.query(`SELECT run_at - now() > interval '55 seconds' AS later, error, status FROM jobs WHERE job_id = $1`, [id]);
    assert.deepEqual(rows[0], { later: true, error: 'boom', status: 'retrying' });
    const att = await db.pool.query('SELECT outcome, error, error_stack FROM job_attempts WHERE job_id = $1', [id]);
    assert.deepEqual(att.rows[0], { outcome: 'retried', error: 'boom', error_stack: 'Error: boom\n  at x' });
  });

  test('an error cut inside an emoji, or holding a NUL, is recorded (as U+FFFD) with the rest of its batch', async () => {
    const a = await claimed();
    const b = await claimed();
    const cut = 'timeout \u{1F525}'.slice(0, -1); // half of the emoji: a lone surrogate
    const r = await ops.jobFail(db.pool, {
      workerId: W1,
      items: [
        { ...a.lease, error: cut, stack: 'at \u0000x', backoffMs: 60_000 },
        { ...b.lease, error: 'plain', backoffMs: 60_000 },
      ],
    });
    assert.deepEqual([r.get(a.id)?.status, r.get(b.id)?.status], ['retrying', 'retrying']);
    const att = await db.pool.query('SELECT error, error_stack FROM job_attempts WHERE job_id = $1', [a.id]);
    assert.deepEqual(att.rows[0], { error: 'timeout \ufffd', error_stack: 'at \ufffdx' });
  });

  test('fail on the last attempt, or with a permanent error: failed (dead letter)', async () => {
    const last = await insertJob(db.pool, { maxAttempts: 1 });
    await ops.jobClaim(db.pool, { ids: [last], workerId: W1, leaseMs: LEASE });
    const perm = await claimed();
    const r = await ops.jobFail(db.pool, {
      workerId: W1,
      items: [
        { jobId: last, attempt: 1, error: 'no more', backoffMs: 1_000 },
        { ...perm.lease, error: 'bad input', permanent: true, backoffMs: 1_000 },
      ],
    });
    assert.equal(r.get(last)!.status, 'failed');
    assert.equal(r.get(perm.id)!.status, 'failed');
    assert.ok((await jobRow(db.pool, last)).finished_at);
  });

  test("a snooze on the last attempt: queued for later with the attempt given back and the last error kept; cancelled when a cancel was asked; another worker's refused", async () => {
    const last = await insertJob(db.pool, { maxAttempts: 1 });
    await db.pool.query(`UPDATE jobs SET error = 'an earlier failure' WHERE job_id = $1`, [last]);
    await ops.jobClaim(db.pool, { ids: [last], workerId: W1, leaseMs: LEASE });
    const asked = await claimed();
    await db.pool.query(`UPDATE jobs SET error = 'its own failure' WHERE job_id = $1`, [asked.id]);
    await ops.jobCancel(db.pool, { ids: [asked.id] });
    const other = await claimed();
    const r = await ops.jobFail(db.pool, {
      workerId: W1,
      items: [
        { jobId: last, attempt: 1, error: 'not ready', stack: 'SnoozeError', backoffMs: 60_000, snooze: true },
        { ...asked.lease, error: 'not ready', backoffMs: 60_000, snooze: true },
      ],
    });
    assert.deepEqual([r.get(last)?.status, r.get(asked.id)?.status], ['queued', 'cancelled']);
    const { rows } = await db.pool.query(
      `SELECT status, attempt_count, max_attempts, error, finished_at, run_at - now() > interval '55 seconds' AS later FROM jobs WHERE job_id = $1`,
      [last],
    );
    assert.deepEqual(rows[0], { status: 'queued', attempt_count: 1, max_attempts: 2, error: 'an earlier failure', finished_at: null, later: true });
    const att = await db.pool.query('SELECT outcome, error FROM job_attempts WHERE job_id = ANY($1::bigint[]) ORDER BY job_id', [[last, asked.id]]);
    assert.deepEqual(att.rows, [{ outcome: 'snoozed', error: 'not ready' }, { outcome: 'cancelled', error: 'not ready' }]);
    assert.equal((await jobRow(db.pool, asked.id)).error, 'its own failure', "a snooze's message is never the job's error");
    const refused = await ops.jobFail(db.pool, { workerId: W2, items: [{ ...other.lease, error: 'x', backoffMs: 1_000, snooze: true }] });
    assert.equal(refused.size, 0, 'the fence holds for a snooze as for any write');
    assert.equal((await jobRow(db.pool, other.id)).status, 'running');
  });
});

describe('operator actions', () => {
  test('cancel: waiting jobs end at once; a running job gets a request; finished jobs are skipped with a reason', async () => {
    const queued = await insertJob(db.pool);
    const running = await insertJob(db.pool, { status: 'running', workerId: W1 });
    const done = await insertJob(db.pool, { status: 'completed' });
    const r = await ops.jobCancel(db.pool, { ids: [queued, running, done, '999999999'] });
    const by = Object.fromEntries(r.items.map((i) => [i.id, i]));
    assert.equal(by[queued]!.outcome, 'cancelled');
    assert.equal(by[running]!.outcome, 'cancel_requested');
    assert.equal(by[done]!.outcome, 'skipped');
    assert.equal(by[done]!.reason, 'already completed');
    assert.equal(by['999999999']!.outcome, 'not_found');
    assert.equal(r.changed, 2);
    assert.equal((await jobRow(db.pool, running)).status, 'running');
  });

  test('cancel ack by the owner ends a cancel-requested job as cancelled', async () => {
    const id = await insertJob(db.pool);
    const [job] = await ops.jobClaim(db.pool, { ids: [id], workerId: W1, leaseMs: LEASE });
    await ops.jobCancel(db.pool, { ids: [id] });
    assert.equal((await ops.jobCancelAck(db.pool, { workerId: W2, leases: [{ jobId: id, attempt: 1 }], unstarted: false })).size, 0);
    assert.ok((await ops.jobCancelAck(db.pool, { workerId: W1, leases: [{ jobId: id, attempt: job!.attemptCount }], unstarted: false })).has(id));
    assert.equal((await jobRow(db.pool, id)).status, 'cancelled');
  });

  test('requeue of a failed job with attempts used up grants one more attempt (or a fresh budget)', async () => {
    const a = await insertJob(db.pool, { status: 'failed', attemptCount: 3, maxAttempts: 3 });
    const b = await insertJob(db.pool, { status: 'failed', attemptCount: 3, maxAttempts: 3 });
    await ops.jobRequeue(db.pool, { ids: [a] });
    await ops.jobRequeue(db.pool, { ids: [b], resetAttempts: true });
    const ra = await jobRow(db.pool, a);
    const rb = await jobRow(db.pool, b);
    assert.deepEqual([ra.status, ra.attempt_count, ra.max_attempts], ['queued', 3, 4]);
    assert.deepEqual([rb.status, rb.attempt_count, rb.max_attempts], ['queued', 3, 6]);
    assert.equal(ra.finished_at, null);
    assert.equal((await ops.jobClaim(db.pool, { ids: [a], workerId: W1, leaseMs: LEASE }))[0]!.attemptCount, 4);
  });

  test('requeue refuses a running job with a live lease and says who holds it for how long', async () => {
    const id = await insertJob(db.pool, { status: 'running', workerId: 'worker-7', leaseInMs: 41_400 });
    const r = await ops.jobRequeue(db.pool, { ids: [id] });
    assert.equal(r.items[0]!.ok, false);
    assert.match(r.items[0]!.reason!, /^lease still held by worker-7 for 4[01] s/);
    assert.equal((await jobRow(db.pool, id)).status, 'running');
  });

  test('a refusal names a dead owner as dead: its lease only runs out', async () => {
    await db.pool.query(
      `INSERT INTO workers (worker_id, host, pid, queues, concurrency, stopped_at, exit) VALUES ('dead-w:9:ab', 'dead-w', 9, '{default}', 1, now(), 'killed by SIGKILL')`,
    );
    const id = await insertJob(db.pool, { status: 'running', workerId: 'dead-w:9:ab', leaseInMs: 20_000 });
    const r = await ops.jobRequeue(db.pool, { ids: [id] });
    assert.match(r.items[0]!.reason!, /^the lease of dead-w:9:ab, whose process ended \(killed by SIGKILL\), runs out in (19|20) s: the recover sweep moves the job on then \(or revoke/);
    assert.equal((await jobRow(db.pool, id)).status, 'running');
  });

  test('requeue with revokeLease takes the job back; the old owner can no longer write', async () => {
    const id = await insertJob(db.pool);
    const [job] = await ops.jobClaim(db.pool, { ids: [id], workerId: W1, leaseMs: LEASE });
    const r = await ops.jobRequeue(db.pool, { ids: [id], revokeLease: true });
    assert.equal(r.items[0]!.outcome, 'revoked');
    const lease = { jobId: id, attempt: job!.attemptCount };
    assert.equal((await ops.jobHeartbeat(db.pool, { workerId: W1, leaseMs: LEASE, leases: [lease] })).renewed.size, 0);
    assert.equal((await ops.jobComplete(db.pool, { workerId: W1, items: [lease] })).size, 0);
    const row = await jobRow(db.pool, id);
    assert.equal(row.status, 'queued');
    const att = await db.pool.query('SELECT outcome FROM job_attempts WHERE job_id = $1', [id]);
    assert.deepEqual(att.rows, [{ outcome: 'aborted' }]);
  });

  test("requeue with revokeLease leaves a job an operator asked to cancel: taken back, it would run again and the cancel be lost", async () => {
    const id = await insertJob(db.pool);
    const [job] = await ops.jobClaim(db.pool, { ids: [id], workerId: W1, leaseMs: LEASE });
    // Seen running before the cancel, as a preview made just before it would have seen it.
    const seen = new Map([[id, { status: 'running' as const, attempt: job!.attemptCount }]]);
    assert.equal((await ops.jobCancel(db.pool, { ids: [id] })).items[0]!.outcome, 'cancel_requested');
    const r = await ops.jobRequeue(db.pool, { ids: [id], revokeLease: true, seen });
    assert.deepEqual([r.items[0]!.outcome, r.items[0]!.reason], ['skipped', `cancel requested: it ends cancelled when ${W1} stops, not run again`]);
    const row = await jobRow(db.pool, id);
    assert.equal(row.status, 'running');
    assert.ok(row.cancel_requested_at, 'the cancel request stands');
    assert.equal((await ops.jobComplete(db.pool, { workerId: W1, items: [{ jobId: id, attempt: job!.attemptCount }] })).size, 1, 'the owner still holds its lease');
  });

  test('requeue with revokeLease: a job its worker completes while the revoke waits for the row is requeued, not refused', async () => {
    const id = await insertJob(db.pool);
    const [job] = await ops.jobClaim(db.pool, { ids: [id], workerId: W1, leaseMs: LEASE });
    // The worker's completion holds the row when the operator's requeue arrives.
    const worker = await db.pool.connect();
    try {
      await worker.query('BEGIN');
      assert.equal((await ops.jobComplete(worker, { workerId: W1, items: [{ jobId: id, attempt: job!.attemptCount }] })).size, 1);
      const requeue = ops.jobRequeue(db.pool, { ids: [id], revokeLease: true });
      await waitFor('the revoke to wait for the completing row', async () =>
        (await db.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0].n > 0,
      );
      await worker.query('COMMIT');
      const r = await requeue;
      assert.deepEqual([r.items[0]!.ok, r.items[0]!.outcome], [true, 'requeued'], JSON.stringify(r.items[0]));
    } finally {
      worker.release();
    }
    const row = await jobRow(db.pool, id);
    assert.equal(row.status, 'queued');
    const att = await db.pool.query('SELECT outcome FROM job_attempts WHERE job_id = $1 ORDER BY attempt', [id]);
    assert.deepEqual(att.rows, [{ outcome: 'completed' }], 'the attempt ended completed, not aborted');
  });

  test('requeue with revokeLease and resetAttempts gives the revoked job a fresh budget, not one attempt', async () => {
    // The last attempt of two is running: "reset" must leave a whole budget after it.
    const last = await insertJob(db.pool, { attemptCount: 1, maxAttempts: 2 });
    const plain = await insertJob(db.pool, { attemptCount: 1, maxAttempts: 2 });
    for (const id of [last, plain]) await ops.jobClaim(db.pool, { ids: [id], workerId: W1, leaseMs: LEASE });
    await ops.jobRequeue(db.pool, { ids: [last], revokeLease: true, resetAttempts: true });
    await ops.jobRequeue(db.pool, { ids: [plain], revokeLease: true });
    const rl = await jobRow(db.pool, last);
    const rp = await jobRow(db.pool, plain);
    assert.deepEqual([rl.status, rl.attempt_count, rl.max_attempts], ['queued', 2, 2 + rl.attempt_budget]);
    assert.deepEqual([rp.status, rp.attempt_count, rp.max_attempts], ['queued', 2, 3], 'without reset: the revoked attempt given back');
  });

  test('requeue does not touch queued jobs already due; delete only removes finished jobs', async () => {
    const queued = await insertJob(db.pool);
    const done = await insertJob(db.pool, { status: 'completed' });
    assert.equal((await ops.jobRequeue(db.pool, { ids: [queued] })).items[0]!.reason, 'already queued and due');
    const d = await ops.jobDelete(db.pool, { ids: [queued, done] });
    assert.deepEqual(d.items.map((i) => i.outcome), ['skipped', 'deleted']);
    assert.equal(await jobRow(db.pool, done), undefined);
  });

  test('delete leaves no attempt of a deleted job behind, even one recorded while it waited on a row lock', async () => {
    // The delete's statement waits on `held` (locked by another transaction); meanwhile
    // `later` gets an attempt row (requeued, claimed and ended), which the statement's
    // snapshot cannot see; then the delete goes on and deletes `later` too.
    const held = await insertJob(db.pool, { status: 'failed' });
    const later = await insertJob(db.pool, { status: 'failed' });
    const locker = await db.pool.connect();
    let open = true;
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM jobs WHERE job_id = $1 FOR UPDATE', [held]);
      const deleting = ops.jobDelete(db.pool, { ids: [held, later] });
      await waitFor('the delete waiting on the locked row', async () => {
        const { rows } = await db.pool.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%DELETE FROM jobs%'`,
        );
        return rows[0].n > 0;
      }, { intervalMs: 10 });
      await db.pool.query(
        `INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome) VALUES ($1, 2, $2, now(), now(), 'completed')`,
        [later, W1],
      );
      await locker.query('COMMIT');
      open = false;
      assert.equal((await deleting).changed, 2);
    } finally {
      if (open) await locker.query('ROLLBACK').catch(() => {});
      locker.release();
    }
    const { rows } = await db.pool.query('SELECT job_id FROM job_attempts WHERE job_id = ANY($1::bigint[])', [[held, later]]);
    assert.deepEqual(rows, []);
  });

  test('delete and requeue let go of a completed job\'s result: its blob is deleted too', async () => {
    const results = new FsResultStore(fs.mkdtempSync(path.join(os.tmpdir(), 'lh-results-')));
    const withResult = async () => {
      const id = await insertJob(db.pool, { status: 'completed' });
      const key = await results.put(id, 1, Buffer.from('{"ok":true}'));
      await db.pool.query('UPDATE jobs SET result_key = $2 WHERE job_id = $1', [id, key]);
      return { id, key };
    };
    const deleted = await withResult();
    const crashed = await results.put(deleted.id, 2, Buffer.from('{"ok":"never pointed to"}')); // an attempt that crashed after its write
    const requeued = await withResult();
    const kept = await withResult(); // requeued without the store: the blob is left as before
    const failed = await insertJob(db.pool, { status: 'failed' }); // no result at all
    assert.equal((await ops.jobDelete(db.pool, { ids: [deleted.id], results })).changed, 1);
    assert.equal((await ops.jobRequeue(db.pool, { ids: [requeued.id, failed], results })).changed, 2);
    await ops.jobRequeue(db.pool, { ids: [kept.id] });
    assert.equal(await results.get(deleted.key), null, 'the deleted job\'s result is gone');
    assert.equal(await results.get(crashed), null, 'and so is the one a crashed attempt of it left');
    assert.equal(await results.get(requeued.key), null, 'the requeued job\'s last result is gone');
    assert.notEqual(await results.get(kept.key), null);
    assert.equal((await jobRow(db.pool, requeued.id)).result_key, null);
    // In bulk (more jobs than deletes run at once), every blob goes, whichever way the store is asked.
    const many = await Promise.all(Array.from({ length: 40 }, withResult));
    assert.equal((await ops.jobDelete(db.pool, { ids: many.slice(0, 20).map((j) => j.id), results })).changed, 20);
    const keyOnly = { put: results.put.bind(results), get: results.get.bind(results), delete: results.delete.bind(results) }; // no deleteAll
    assert.equal((await ops.jobDelete(db.pool, { ids: many.slice(20).map((j) => j.id), results: keyOnly })).changed, 20);
    for (const j of many) assert.equal(await results.get(j.key), null, `job ${j.id}'s result is gone`);
    fs.rmSync(results.dir, { recursive: true, force: true });
  });

  test('requeue runs a job scheduled for later now ("run now"), and a retry waiting out its backoff', async () => {
    const later = await insertJob(db.pool, { runInMs: 3_600_000 });
    const backoff = await insertJob(db.pool, { status: 'retrying', attemptCount: 1, runInMs: 600_000 });
    const r = await ops.jobRequeue(db.pool, { ids: [later, backoff] });
    assert.deepEqual(r.items.map((i) => i.outcome), ['requeued', 'requeued']);
    for (const id of [later, backoff]) {
      const { rows } = await db.pool.query(`SELECT status, run_at <= now() AS due FROM jobs WHERE job_id = $1`, [id]);
      assert.deepEqual(rows[0], { status: 'queued', due: true });
    }
    assert.equal((await jobRow(db.pool, later)).attempt_count, 0, 'no attempt spent');
  });

  test('release hands a lease back without spending the attempt', async () => {
    const id = await insertJob(db.pool, { maxAttempts: 1 });
    const [job] = await ops.jobClaim(db.pool, { ids: [id], workerId: W1, leaseMs: LEASE });
    const rings = await ops.jobRelease(db.pool, { workerId: W1, leases: [{ jobId: id, attempt: job!.attemptCount }], reason: 'shutdown', unstarted: false });
    assert.equal(rings.length, 1);
    const row = await jobRow(db.pool, id);
    assert.deepEqual([row.status, row.attempt_count, row.max_attempts], ['queued', 1, 2]);
    assert.equal((await ops.jobClaim(db.pool, { ids: [id], workerId: W2, leaseMs: LEASE })).length, 1);
  });
});

describe('workerDied', () => {
  const lease = async (id: string) =>
    (await db.pool.query(`SELECT lease_expires_at <= now() AS ended FROM jobs WHERE job_id = $1`, [id])).rows[0].ended as boolean;

  test("with the dead process's worker id: its row is marked and the leases it held end now; nobody else's do", async () => {
    const dead = 'died-a:41:aaaaaa';
    const alive = 'died-a:42:bbbbbb';
    await ops.workerRegister(db.pool, { workerId: dead, host: 'died-a', pid: 41, queues: ['died'], concurrency: 2 });
    await ops.workerRegister(db.pool, { workerId: alive, host: 'died-a', pid: 42, queues: ['died'], concurrency: 2 });
    const [j1, j2, j3] = [await insertJob(db.pool, { queue: 'died' }), await insertJob(db.pool, { queue: 'died' }), await insertJob(db.pool, { queue: 'died' })];
    await ops.jobClaim(db.pool, { ids: [j1!, j2!], workerId: dead, leaseMs: LEASE });
    await ops.jobClaim(db.pool, { ids: [j3!], workerId: alive, leaseMs: LEASE });
    const r = await ops.workerDied(db.pool, { host: 'died-a', pid: 41, exit: 'killed by SIGKILL', workerId: dead });
    assert.deepEqual(r, { workerId: dead, leasesEnded: 2 });
    assert.deepEqual([await lease(j1!), await lease(j2!), await lease(j3!)], [true, true, false]);
    // Still running under the dead worker: the sweep moves them, recording how it ended.
    const moved = await ops.jobRecover(db.pool, { ids: [j1!, j2!, j3!] });
    assert.deepEqual(moved.expired.map((e) => e.id).sort(), [j1, j2].sort());
    assert.match((await jobRow(db.pool, j1!)).error, /worker died-a:41:aaaaaa stopped renewing \(killed by SIGKILL\)/);
    // Reported twice (the row is stopped now): nothing more to end.
    assert.deepEqual(await ops.workerDied(db.pool, { host: 'died-a', pid: 41, exit: 'killed by SIGKILL', workerId: dead }), { workerId: null, leasesEnded: 0 });
  });

  test('without an id, or with an id that is not that host and pid, no lease is touched (another container may have the same host name and pid)', async () => {
    const w = 'died-b:51:cccccc';
    await ops.workerRegister(db.pool, { workerId: w, host: 'died-b', pid: 51, queues: ['died'], concurrency: 1 });
    const j = await insertJob(db.pool, { queue: 'died' });
    await ops.jobClaim(db.pool, { ids: [j], workerId: w, leaseMs: LEASE });
    assert.deepEqual(await ops.workerDied(db.pool, { host: 'died-b', pid: 52, exit: 'killed by SIGKILL', workerId: w }), { workerId: null, leasesEnded: 0 });
    assert.deepEqual(await ops.workerDied(db.pool, { host: 'died-b', pid: 51, exit: 'killed by SIGKILL' }), { workerId: w, leasesEnded: 0 });
    assert.equal(await lease(j), false);
    assert.equal((await jobRow(db.pool, j)).status, 'running');
  });
});

describe('jobRecover', () => {
  test('moves expired leases on (retrying / failed / cancelled) and leaves live leases alone', async () => {
    const queue = 'recover-1';
    const retry = await insertJob(db.pool, { queue, status: 'running', leaseInMs: -2_000, attemptCount: 1, maxAttempts: 3 });
    const dead = await insertJob(db.pool, { queue, status: 'running', leaseInMs: -2_000, attemptCount: 3, maxAttempts: 3 });
    const cancel = await insertJob(db.pool, { queue, status: 'running', leaseInMs: -2_000, cancelRequested: true });
    const live = await insertJob(db.pool, { queue, status: 'running', leaseInMs: 60_000 });
    const preview = await ops.jobRecover(db.pool, { dryRun: true, ids: [retry, dead, cancel, live] });
    assert.deepEqual(
      Object.fromEntries(preview.expired.map((e) => [e.id, e.status])),
      { [retry]: 'retrying', [dead]: 'failed', [cancel]: 'cancelled' },
    );
    assert.equal((await jobRow(db.pool, retry)).status, 'running', 'a preview changes nothing');
    const r = await ops.jobRecover(db.pool, { ids: [retry, dead, cancel, live] });
    assert.equal(r.expired.length, 3);
    assert.equal((await jobRow(db.pool, retry)).status, 'retrying');
    assert.equal((await jobRow(db.pool, dead)).status, 'failed');
    assert.equal((await jobRow(db.pool, cancel)).status, 'cancelled');
    assert.equal((await jobRow(db.pool, live)).status, 'running');
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM job_attempts WHERE outcome = 'lease_lost' AND job_id = ANY($1)`, [[retry, dead, cancel]]);
    assert.equal(rows[0].n, 3);
    // Recover never brings a finished job back.
    const again = await ops.jobRecover(db.pool, { ids: [retry, dead, cancel, live] });
    assert.equal(again.expired.length, 0);
  });

  test('a preview or a run that reaches its limit says more may be left (moreMayChange)', async () => {
    const ids = await Promise.all(Array.from({ length: 5 }, () => insertJob(db.pool, { queue: 'recover-more', status: 'running', leaseInMs: -2_000 })));
    const within = await ops.jobRecover(db.pool, { dryRun: true, ids, maxRows: 10 });
    assert.deepEqual([within.expired.length, within.moreMayChange], [5, false]);
    const preview = await ops.jobRecover(db.pool, { dryRun: true, ids, maxRows: 3 });
    assert.deepEqual([preview.expired.length, preview.moreMayChange], [3, true], 'the preview stopped at its limit');
    const first = await ops.jobRecover(db.pool, { ids, maxRows: 3, batchSize: 2 });
    assert.deepEqual([first.expired.length, first.moreMayChange], [3, true], 'the run stopped at its limit');
    const rest = await ops.jobRecover(db.pool, { ids, maxRows: 3 });
    assert.deepEqual([rest.expired.length, rest.moreMayChange], [2, false], 'the next one takes the rest');
  });

  test('lists due jobs that waited past the grace for re-signalling, bounded by the cap', async () => {
    for (let k = 0; k < 30; k++) await insertJob(db.pool, { queue: 'orphans', runInMs: -10_000 });
    await insertJob(db.pool, { queue: 'orphans', runInMs: 60_000 });
    const r = await ops.jobRecover(db.pool, { dryRun: true, signalGraceMs: 1_000, signalCap: 20 });
    const q = r.resignalled.filter((x) => x.queue === 'orphans');
    assert.equal(q.length, 20);
    assert.ok(q.every((x) => x.waitedMs >= 9_000));
  });

  test('re-rings exactly the due jobs whose id is not in Redis, as its preview said, however old a recovered job is', async () => {
    const queue = 'rering-exact';
    const doorbell = new RedisDoorbell(REDIS_URL, uniquePrefix('rering'), db.pool, createLogger());
    try {
      const lost = [];
      for (let k = 0; k < 3; k++) lost.push(await insertJob(db.pool, { queue, runInMs: -10_000 })); // rings lost
      // A running job whose worker died; it was due an hour ago, so once recovered it is the
      // oldest waiting job of the queue, and its ring goes to the front of the list.
      const crashed = await insertJob(db.pool, { queue, status: 'running', leaseInMs: -2_000, attemptCount: 1, maxAttempts: 3 });
      await db.pool.query(`UPDATE jobs SET run_at = now() - interval '1 hour' WHERE job_id = $1`, [crashed]);
      const opts = { doorbell, signalGraceMs: 1_000, signalCap: 20 };
      const rung = (r: ops.RecoverReport) => r.resignalled.filter((x) => x.queue === queue).map((x) => x.id).sort();
      const preview = await ops.jobRecover(db.pool, { ...opts, dryRun: true });
      assert.deepEqual(rung(preview), [...lost].sort());
      const r = await ops.jobRecover(db.pool, opts);
      assert.deepEqual(r.expired.filter((x) => x.queue === queue).map((x) => x.id), [crashed]);
      assert.deepEqual(rung(r), [...lost].sort(), 'the jobs the preview listed, not the recovered one again');
      const list = (await doorbell.peek(queue, 100))!;
      assert.deepEqual([...list].sort(), [crashed, ...lost].sort(), 'one ring each');
      assert.deepEqual(rung(await ops.jobRecover(db.pool, opts)), [], 'and nothing more while every due job has its ring');
    } finally {
      await doorbell.discard([queue]);
      await doorbell.close();
      await db.pool.query(`DELETE FROM jobs WHERE queue = $1`, [queue]);
    }
  });

  test('re-signals only jobs some live worker on the queue has the handler for, however many others come first', async () => {
    const queue = 'stranded-rings';
    // 40 older jobs of a type no worker has any more, then 3 a worker can run.
    for (let k = 0; k < 40; k++) await insertJob(db.pool, { queue, type: 'gone.type', runInMs: -20_000 });
    const runnable = [];
    for (let k = 0; k < 3; k++) runnable.push(await insertJob(db.pool, { queue, type: 'demo.noop', runInMs: -10_000 }));
    const listed = async () =>
      (await ops.jobRecover(db.pool, { dryRun: true, signalGraceMs: 1_000, signalCap: 20 })).resignalled.filter((x) => x.queue === queue).map((x) => x.id);
    // No live worker on the queue: nobody to tell apart, the oldest are listed (as before).
    assert.equal((await listed()).length, 20);
    await ops.workerRegister(db.pool, { workerId: 'rings:1:aaaaaa', host: 'rings', pid: 1, queues: [queue], concurrency: 1, types: ['demo.noop'] });
    assert.deepEqual((await listed()).sort(), [...runnable].sort(), 'only what the live worker can run');
    // A live worker of an earlier version (no types recorded) claims any type: all are listed again.
    await ops.workerRegister(db.pool, { workerId: 'rings:2:bbbbbb', host: 'rings', pid: 2, queues: [queue], concurrency: 1, types: null });
    assert.equal((await listed()).length, 20);
    await db.pool.query(`DELETE FROM workers WHERE host = 'rings'`);
    await db.pool.query(`DELETE FROM jobs WHERE queue = $1`, [queue]);
  });

  test('leaves suspects to the poll: a ring for one would be popped and dropped by every worker holding a suspect, sweep after sweep', async () => {
    const queue = 'suspect-rings';
    const plain = await insertJob(db.pool, { queue, status: 'retrying', runInMs: -10_000, leaseLostStreak: 1 });
    const suspect = await insertJob(db.pool, { queue, status: 'retrying', runInMs: -20_000, leaseLostStreak: 2 });
    const { resignalled } = await ops.jobRecover(db.pool, { dryRun: true, signalGraceMs: 1_000, signalCap: 20 });
    assert.deepEqual(resignalled.filter((x) => x.queue === queue).map((x) => x.id), [plain]);
    // The poll's claim (by queue) takes it, for a worker that holds no suspect.
    const claimed = await ops.jobClaimNext(db.pool, { queue, limit: 5, workerId: W1, leaseMs: 60_000, allowSuspect: true });
    assert.ok(claimed.some((j) => j.id === suspect), 'the suspect is claimed by the poll');
    await db.pool.query(`DELETE FROM jobs WHERE queue = $1`, [queue]);
  });

  test('two sweepers at once: one runs, the other backs off', async () => {
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query(`SELECT pg_advisory_lock(hashtext('leasehold.recover'))`);
      assert.equal(await ops.recoverSweep(db.pool, {}), null);
      await locker.query(`SELECT pg_advisory_unlock(hashtext('leasehold.recover'))`);
      assert.notEqual(await ops.recoverSweep(db.pool, {}), null);
    } finally {
      await locker.end();
    }
  });
});

// river#1302: a rescue that updated rows by id, from an earlier read, moved jobs that had
// completed in between back to retryable. Here the sweep re-checks each row in the statement
// that moves it and passes by rows a completion holds; a completion waits for a row the sweep
// holds and then meets the fence. Whichever commits first wins; the other changes nothing.
describe('the recover sweep racing the owner on one row (separate connections)', () => {
  const expired = () => insertJob(db.pool, { queue: 'recover-race', status: 'running', workerId: W1, leaseInMs: -1_000 });
  const lease = (id: string) => ({ jobId: id, attempt: 1 });
  const outcomes = async (id: string) =>
    (await db.pool.query(`SELECT attempt, outcome::text FROM job_attempts WHERE job_id = $1 ORDER BY attempt`, [id])).rows.map((r) => `${r.attempt}:${r.outcome}`);
  /** A connection of its own, and its server process (to see what it waits for). */
  async function connection() {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    return { client, pid };
  }
  const waitsForARow = (pid: number) =>
    waitFor('the statement to wait for the row', async () =>
      (await db.pool.query(`SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1`, [pid])).rows[0]?.wait_event_type === 'Lock',
    );

  test('a completion holding the row: the sweep passes it by (moves nothing, waits for nothing); the completion commits and stands', { timeout: 60_000 }, async () => {
    const id = await expired();
    const owner = await connection();
    const sweeper = await connection();
    try {
      await owner.client.query('BEGIN');
      assert.equal((await ops.jobComplete(owner.client, { workerId: W1, items: [lease(id)] })).size, 1);
      // A sweep that waited for the row would wait for ever here (the owner commits after it):
      // it fails at the lock timeout instead.
      await sweeper.client.query(`SET lock_timeout = '5s'`);
      assert.deepEqual((await ops.jobRecover(sweeper.client, { ids: [id] })).expired, [], 'the locked row is passed by');
      await owner.client.query('COMMIT');
    } finally {
      await owner.client.end();
      await sweeper.client.end();
    }
    assert.deepEqual((await ops.jobRecover(db.pool, { ids: [id] })).expired, [], 'a completed job is never moved back');
    assert.equal((await jobRow(db.pool, id)).status, 'completed');
    assert.deepEqual(await outcomes(id), ['1:completed']);
  });

  test("the sweep holding the row: the owner's completion and failure wait for it, then are refused; after a sweep that rolled back, the completion is accepted", { timeout: 60_000 }, async () => {
    for (const write of ['complete', 'fail'] as const) {
      const id = await expired();
      const sweeper = await connection();
      const owner = await connection();
      try {
        await sweeper.client.query('BEGIN');
        assert.deepEqual((await ops.jobRecover(sweeper.client, { ids: [id] })).expired.map((e) => [e.id, e.status]), [[id, 'retrying']]);
        const late = write === 'complete'
          ? ops.jobComplete(owner.client, { workerId: W1, items: [lease(id)] })
          : ops.jobFail(owner.client, { workerId: W1, items: [{ ...lease(id), error: 'late', backoffMs: 0 }] });
        await waitsForARow(owner.pid);
        await sweeper.client.query('COMMIT');
        assert.equal((await late).size, 0, `the ${write} is refused once the sweep has moved the job`);
      } finally {
        await sweeper.client.end();
        await owner.client.end();
      }
      assert.equal((await jobRow(db.pool, id)).status, 'retrying');
      assert.deepEqual(await outcomes(id), ['1:lease_lost']);
    }

    // The sweep gave up (its transaction rolled back, its process died): the lease has run out
    // but nobody took the job, so its owner's completion stands.
    const id = await expired();
    const sweeper = await connection();
    const owner = await connection();
    try {
      await sweeper.client.query('BEGIN');
      assert.equal((await ops.jobRecover(sweeper.client, { ids: [id] })).expired.length, 1);
      const late = ops.jobComplete(owner.client, { workerId: W1, items: [lease(id)] });
      await waitsForARow(owner.pid);
      await sweeper.client.query('ROLLBACK');
      assert.equal((await late).size, 1);
    } finally {
      await sweeper.client.end();
      await owner.client.end();
    }
    assert.equal((await jobRow(db.pool, id)).status, 'completed');
    assert.deepEqual(await outcomes(id), ['1:completed']);
  });

  test('300 expired jobs, owners completing and failing them one by one while sweeps move them in batches of 3: each ends by exactly one of them', { timeout: 60_000 }, async () => {
    const owners = createPool(db.url, { max: 4 });
    const sweepers = createPool(db.url, { max: 2 });
    // A fixed sequence (a linear congruential generator): a failure repeats the same way.
    let seed = 1302;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const wins = new Map<string, string[]>();
    const won = (id: string, by: string) => wins.set(id, [...(wins.get(id) ?? []), by]);
    try {
      for (let round = 0; round < 30; round++) {
        const ids: string[] = [];
        for (let k = 0; k < 10; k++) ids.push(await expired());
        const order = [...ids].sort(() => random() - 0.5);
        await Promise.all([
          ...order.map(async (id) => {
            if (random() < 0.5) {
              if ((await ops.jobComplete(owners, { workerId: W1, items: [lease(id)] })).size) won(id, 'completed');
            } else if ((await ops.jobFail(owners, { workerId: W1, items: [{ ...lease(id), error: 'boom', backoffMs: 0 }] })).size) won(id, 'retried');
          }),
          ...[0, 1].map(async () => {
            for (const e of (await ops.jobRecover(sweepers, { ids, batchSize: 3 })).expired) won(e.id, 'lease_lost');
          }),
        ]);
        for (const id of ids) {
          const by = wins.get(id) ?? [];
          assert.equal(by.length, 1, `job ${id} ended by ${JSON.stringify(by)} (round ${round})`);
          assert.deepEqual(await outcomes(id), [`1:${by[0]}`], `job ${id}'s attempt is recorded as its winner's`);
          assert.equal((await jobRow(db.pool, id)).status, by[0] === 'completed' ? 'completed' : 'retrying');
        }
      }
      const by = [...wins.values()].map((w) => w[0]);
      console.log(`# ${by.length} races: ${['completed', 'retried', 'lease_lost'].map((w) => `${w} ${by.filter((x) => x === w).length}`).join(', ')}`);
      // Every kind of winner happened, or the race was not a race.
      for (const w of ['completed', 'retried', 'lease_lost']) assert.ok(by.includes(w), `no job was won by ${w}`);
    } finally {
      await owners.end();
      await sweepers.end();
    }
  });
});

describe('schema invariants', () => {
  test('the database refuses rows that break the state machine', async () => {
    const bad = [
      `INSERT INTO jobs (type, status) VALUES ('x', 'running')`, // running without a lease
      `INSERT INTO jobs (type, status) VALUES ('x', 'completed')`, // terminal without finished_at
      `INSERT INTO jobs (type, attempt_count, max_attempts) VALUES ('x', 4, 3)`, // over the cap
      `INSERT INTO jobs (type, lease_expires_at) VALUES ('x', now())`, // lease while queued
      `INSERT INTO jobs (type, status, cancel_requested_at) VALUES ('x', 'queued', now())`,
    ];
    for (const q of bad) await assert.rejects(db.pool.query(q), /violates check constraint/, q);
  });
});

describe('claims of a worker\'s handled types', () => {
  test('lock only the jobs they take, however many types have due jobs: racing claimers are not left empty', async () => {
    const queue = 'typed-locks';
    const types = Array.from({ length: 20 }, (_, k) => `t.${k}`);
    for (const type of types) for (let k = 0; k < 3; k++) await insertJob(db.pool, { queue, type, runInMs: -1_000 });
    const holder = await db.pool.connect();
    const other = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      const taken = await ops.jobClaimNext(holder, { queue, workerId: W1, leaseMs: LEASE, limit: 2, types });
      assert.equal(taken.length, 2);
      // While that claim's transaction is open, another claimer can lock every other job.
      const { rows } = await other.query(`SELECT count(*)::int AS n FROM (SELECT 1 FROM jobs WHERE queue = $1 AND status = 'queued' FOR UPDATE SKIP LOCKED) t`, [queue]);
      assert.equal(rows[0].n, types.length * 3 - 2);
      const next = await ops.jobClaimNext(other, { queue, workerId: W2, leaseMs: LEASE, limit: 10, types });
      assert.equal(next.length, 10, 'a racing claimer fills its claim');
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
      other.release();
      await db.pool.query('DELETE FROM jobs WHERE queue = $1', [queue]);
    }
  });
});

describe('jobClaimExpired', () => {
  test('takes over expired leases of the queue, leaving live, exhausted and cancel-requested ones', async () => {
    const queue = 'expired-q';
    const expired = await insertJob(db.pool, { queue, status: 'running', workerId: 'dead:1:x', leaseInMs: -1_000 });
    await insertJob(db.pool, { queue, status: 'running', leaseInMs: 60_000 });
    await insertJob(db.pool, { queue, status: 'running', leaseInMs: -1_000, attemptCount: 3, maxAttempts: 3 });
    await insertJob(db.pool, { queue, status: 'running', leaseInMs: -1_000, cancelRequested: true });
    const got = await ops.jobClaimExpired(db.pool, { queue, workerId: W2, leaseMs: LEASE });
    assert.deepEqual(got.map((j) => [j.id, j.attemptCount]), [[expired, 2]]);
    const { rows } = await db.pool.query('SELECT outcome, worker_id FROM job_attempts WHERE job_id = $1 ORDER BY attempt', [expired]);
    assert.deepEqual(rows, [{ outcome: 'lease_lost', worker_id: 'dead:1:x' }, { outcome: null, worker_id: W2 }]);
  });
});

describe('suspects (likely poison jobs)', () => {
  test('the jobs of a crashed host are taken over together; a job lost twice in a row is taken alone', async () => {
    const queue = 'suspect-q';
    const crashed = [];
    for (let i = 0; i < 3; i++) crashed.push(await insertJob(db.pool, { queue, status: 'running', workerId: 'dead:1:x', leaseInMs: -1_000 }));
    const poison = [];
    for (let i = 0; i < 2; i++)
      poison.push(await insertJob(db.pool, { queue, status: 'running', workerId: 'dead:1:x', leaseInMs: -1_000, leaseLostStreak: 1 }));
    // A worker holding a suspect takes the innocent takeovers only.
    const first = await ops.jobClaimExpired(db.pool, { queue, workerId: W2, leaseMs: LEASE, limit: 10, allowSuspect: false });
    assert.deepEqual(first.map((j) => j.id).sort(), [...crashed].sort());
    assert.ok(first.every((j) => j.leaseLostStreak === 1));
    // Then the suspects (second loss in a row): one per claim.
    const second = await ops.jobClaimExpired(db.pool, { queue, workerId: W2, leaseMs: LEASE, limit: 10 });
    assert.deepEqual(second.map((j) => [j.id, j.leaseLostStreak]), [[poison[0], 2]]);
    // Recovered by the sweep with a streak of 2, a queued suspect is also claimed alone.
    const queued = [];
    for (let i = 0; i < 2; i++) queued.push(await insertJob(db.pool, { queue: 'suspect-q2', leaseLostStreak: 2 }));
    const fresh = await insertJob(db.pool, { queue: 'suspect-q2', leaseLostStreak: 1 });
    const got = await ops.jobClaim(db.pool, { ids: [...queued, fresh], workerId: W1, leaseMs: LEASE });
    assert.deepEqual(got.map((j) => j.id).sort(), [queued[0], fresh].sort());
  });

  test('only leases lost in a row count: an attempt its worker handed back after running, or an operator revoked or cancelled, ends the streak', async () => {
    const queue = 'suspect-streak';
    // Each job has lost one lease, and its next attempt runs (attempt 2, under W1).
    const running = () => insertJob(db.pool, { queue, status: 'running', workerId: W1, attemptCount: 2, maxAttempts: 5, leaseLostStreak: 1 });
    const lease = (id: string) => [{ jobId: id, attempt: 2 }];
    const streak = async (id: string) => (await jobRow(db.pool, id)).lease_lost_streak as number;

    const handedBack = await running();
    await ops.jobRelease(db.pool, { workerId: W1, leases: lease(handedBack), reason: 'shutdown', unstarted: false });
    const neverStarted = await running();
    await ops.jobRelease(db.pool, { workerId: W1, leases: lease(neverStarted), reason: 'claimed ahead', unstarted: true });
    const revoked = await running();
    assert.equal((await ops.jobRequeue(db.pool, { ids: [revoked], revokeLease: true })).items[0]?.outcome, 'revoked');
    // Revoked once its lease had run out (its worker gone, no sweep yet): that loss counts.
    const revokedExpired = await insertJob(db.pool, { queue, status: 'running', workerId: W1, attemptCount: 2, maxAttempts: 5, leaseLostStreak: 1, leaseInMs: -1_000 });
    assert.equal((await ops.jobRequeue(db.pool, { ids: [revokedExpired], revokeLease: true })).items[0]?.outcome, 'revoked');
    const cancelled = await running();
    await ops.jobCancel(db.pool, { ids: [cancelled] });
    assert.ok((await ops.jobCancelAck(db.pool, { workerId: W1, leases: lease(cancelled), unstarted: false })).has(cancelled));
    const cancelledUnstarted = await running();
    await ops.jobCancel(db.pool, { ids: [cancelledUnstarted] });
    assert.ok((await ops.jobCancelAck(db.pool, { workerId: W1, leases: lease(cancelledUnstarted), unstarted: true })).has(cancelledUnstarted));

    assert.deepEqual(
      {
        handedBack: await streak(handedBack),
        neverStarted: await streak(neverStarted),
        revoked: await streak(revoked),
        revokedExpired: await streak(revokedExpired),
        cancelled: await streak(cancelled),
        cancelledUnstarted: await streak(cancelledUnstarted),
      },
      // A job claimed ahead and never run says nothing of itself: its streak is kept.
      { handedBack: 0, neverStarted: 1, revoked: 0, revokedExpired: 2, cancelled: 0, cancelledUnstarted: 1 },
    );
    // The handed-back job loses its next lease: one loss, not two in a row, so not a suspect —
    // a worker already holding a suspect still takes it.
    const [next] = await ops.jobClaim(db.pool, { ids: [handedBack], workerId: W2, leaseMs: LEASE });
    await db.pool.query(`UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE job_id = $1`, [handedBack]);
    const [takenOver] = await ops.jobClaim(db.pool, { ids: [handedBack], workerId: W1, leaseMs: LEASE, allowSuspect: false });
    assert.deepEqual([next?.attemptCount, takenOver?.attemptCount, takenOver?.leaseLostStreak], [3, 4, 1]);
  });
});

describe('recoverSweep', () => {
  test('gives a jobs table with rows but no planner statistics its first ones, once', async () => {
    // A table of its own, as a fresh installation has: rows, never analyzed nor vacuumed.
    const fresh = await testDatabase();
    const stats = async () => (await fresh.pool.query(`SELECT reltuples FROM pg_class WHERE oid = 'jobs'::regclass`)).rows[0].reltuples as number;
    const empty = await ops.recoverSweep(fresh.pool, {});
    assert.equal(empty?.analyzed, null, 'an empty table is left to autovacuum');
    await fresh.pool.query(`INSERT INTO jobs (queue, type) SELECT 'q', 'demo.noop' FROM generate_series(1, 500)`);
    assert.ok((await stats()) < 0, 'no statistics yet');
    const first = await ops.recoverSweep(fresh.pool, {});
    assert.equal(first?.analyzed, 'analyzed');
    assert.equal(await stats(), 500, 'the planner now knows the table');
    assert.equal((await ops.recoverSweep(fresh.pool, {}))?.analyzed, null, 'then autovacuum keeps them');
  });

  test('a sweeper frozen while holding the lock loses it to the idle timeout of the server', async () => {
    // A "sweeper" takes the lock the way recoverSweep does, then stops talking.
    const frozen = new pg.Client({ connectionString: db.url });
    frozen.on('error', () => {});
    await frozen.connect();
    await frozen.query(`SET idle_session_timeout = 1000`);
    await frozen.query(`SELECT pg_try_advisory_lock(hashtext('leasehold.recover'))`);
    assert.equal(await ops.recoverSweep(db.pool, {}), null, 'the lock is held');
    const report = await waitFor('the lock to be freed', () => ops.recoverSweep(db.pool, {}), { timeoutMs: 30_000, intervalMs: 200 });
    assert.ok(report);
    await frozen.end().catch(() => {});
  });
});

describe('retention (jobPrune)', () => {
  const DAY = 86_400_000;
  /** A job that finished `days` ago (enqueued an hour before), with an attempt row. */
  const finishedAgo = async (status: 'completed' | 'failed' | 'cancelled', days: number, queue = 'prune-q') => {
    const id = await insertJob(db.pool, { status, queue });
    await db.pool.query(
      `UPDATE jobs SET finished_at = now() - $2::int * interval '1 day', created_at = now() - $2::int * interval '1 day' - interval '1 hour',
                       started_at = now() - $2::int * interval '1 day' WHERE job_id = $1`, [id, days]);
    await db.pool.query(
      `INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome)
       VALUES ($1, 1, 'w', now() - $2::int * interval '1 day', now() - $2::int * interval '1 day', $3)`,
      [id, days, status === 'failed' ? 'failed' : status === 'cancelled' ? 'cancelled' : 'completed']);
    return id;
  };
  const exists = async (ids: string[]) =>
    (await db.pool.query(`SELECT job_id::text AS id FROM jobs WHERE job_id = ANY($1::bigint[]) ORDER BY job_id`, [ids])).rows.map((r) => r.id);
  /** A result stored for the job's first attempt, and pointed to by the job. */
  const withResult = async (results: FsResultStore, id: string) => {
    const key = await results.put(id, 1, Buffer.from('{"ok":true}'));
    await db.pool.query('UPDATE jobs SET result_key = $2 WHERE job_id = $1', [id, key]);
    return key;
  };
  const attemptsOf = async (ids: string[]) =>
    (await db.pool.query(`SELECT count(*)::int AS n FROM job_attempts WHERE job_id = ANY($1::bigint[])`, [ids])).rows[0].n;
  /** The walk every sweeper shares, back at the start and awake. */
  const freshWalk = () => db.pool.query(`UPDATE retention_walk SET cursor = 0, rest_until = NULL`);
  const week = { completedMs: 7 * DAY, cancelledMs: 7 * DAY, failedMs: null };

  test('deletes finished jobs past their status\'s window, with their attempts and results, and nothing else', async () => {
    await freshWalk();
    const results = new FsResultStore(fs.mkdtempSync(path.join(os.tmpdir(), 'lh-results-')));
    const oldDone = await finishedAgo('completed', 10);
    const key = await withResult(results, oldDone);
    const oldCancelled = await finishedAgo('cancelled', 10);
    const crashed = await results.put(oldCancelled, 1, Buffer.from('{"ok":"never pointed to"}')); // an attempt that crashed after its write
    const oldFailed = await finishedAgo('failed', 40);
    const recentDone = await finishedAgo('completed', 1);
    const oldQueued = await insertJob(db.pool, { queue: 'prune-q' });
    await db.pool.query(`UPDATE jobs SET created_at = now() - interval '20 days' WHERE job_id = $1`, [oldQueued]);
    const running = await insertJob(db.pool, { status: 'running', queue: 'prune-q' });
    const all = [oldDone, oldCancelled, oldFailed, recentDone, oldQueued, running];

    // The dead letter is kept (no window for failed jobs): the defaults.
    const r = await ops.pruneFor(db.pool, { retention: week, restMs: 0 });
    assert.equal(r.deleted, 2);
    assert.equal(r.cursor, '0', 'the whole table fits one range: the next walk starts from the bottom');
    assert.deepEqual(await exists(all), [oldFailed, recentDone, oldQueued, running]);
    assert.equal(await attemptsOf([oldDone, oldCancelled]), 0, 'their attempt history went with them');
    assert.equal(await attemptsOf([oldFailed, recentDone]), 2);
    await ops.dropDeletedResults(results, r.results);
    assert.equal(await results.get(key), null, 'the result a pruned job pointed to is deleted');
    assert.equal(await results.get(crashed), null, 'and the one a crashed attempt of another left');

    // With a window for failed jobs, the old dead letter goes too; the rest stays.
    assert.equal((await ops.pruneFor(db.pool, { retention: { ...week, failedMs: 30 * DAY }, restMs: 0 })).deleted, 1);
    assert.deepEqual(await exists(all), [recentDone, oldQueued, running]);
    // No window at all: nothing is read.
    assert.equal((await ops.pruneFor(db.pool, { retention: { completedMs: null, cancelledMs: null, failedMs: null }, restMs: 0 })).scanned, 0);
    fs.rmSync(results.dir, { recursive: true, force: true });
  });

  test('walks the ids a range at a time, and from the bottom again once a range reaches young jobs', async () => {
    const old: string[] = [];
    for (let k = 0; k < 25; k++) old.push(await finishedAgo('completed', 10));
    // More young jobs than a range: the range that meets them is full, so only their age
    // (not the table's end) can send the walk back to the bottom.
    const young: string[] = [];
    for (let k = 0; k < 15; k++) young.push(await insertJob(db.pool, { status: 'completed' }));
    const retention = { completedMs: 7 * DAY, cancelledMs: null, failedMs: null };
    let cursor = String(BigInt(old[0]!) - 1n);
    const passes: [number, number, string][] = [];
    for (let k = 0; k < 3; k++) {
      const r = await ops.jobPrune(db.pool, { retention, cursor, range: 10 });
      passes.push([r.scanned, r.deleted, r.cursor]);
      cursor = r.cursor;
    }
    assert.deepEqual(passes, [
      [10, 10, old[9]],
      [10, 10, old[19]],
      [10, 5, '0'], // the last five old ones and five young ones: start again from the bottom
    ]);
    assert.deepEqual(await exists([...old, ...young]), young);
  });

  test('every sweeper continues one walk, and after it they all rest; results go once the lock is let go', async () => {
    await freshWalk();
    const results = new FsResultStore(fs.mkdtempSync(path.join(os.tmpdir(), 'lh-results-')));
    const id = await finishedAgo('cancelled', 9);
    const key = await withResult(results, id);
    const r = await ops.recoverSweep(db.pool, { retention: week, results });
    assert.ok(r, 'this sweeper holds the lock');
    assert.equal(r.pruned?.deleted, 1);
    assert.equal(r.pruned?.cursor, '0');
    assert.deepEqual(await exists([id]), []);
    await ops.resultsDeleting(results); // the deletes it started in the background
    assert.equal(await results.get(key), null);
    // Another process's sweep right after: the walk ended, so it rests, whatever is due.
    const next = await finishedAgo('cancelled', 9);
    const rested = await ops.recoverSweep(db.pool, { retention: week });
    assert.equal(rested?.pruned?.resting, true);
    assert.equal(rested?.pruned?.deleted, 0);
    assert.deepEqual(await exists([next]), [next]);
    await freshWalk(); // the rest is over
    assert.equal((await ops.recoverSweep(db.pool, { retention: week }))?.pruned?.deleted, 1);
    assert.equal((await ops.recoverSweep(db.pool, {}))?.pruned, null, 'no retention: no walk');
    fs.rmSync(results.dir, { recursive: true, force: true });
  });

  test("pruned jobs' results are deleted in the background: a slow store holds up no sweep", async () => {
    await freshWalk();
    const store = new FsResultStore(fs.mkdtempSync(path.join(os.tmpdir(), 'lh-results-')));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // The real store, whose deletes wait until the test lets them go (a slow shared volume).
    const slow: ResultStore = Object.assign(Object.create(store), { deleteAll: async (id: string) => (await gate, store.deleteAll(id)) });
    const id = await finishedAgo('completed', 9);
    const key = await withResult(store, id);
    const r = await ops.recoverSweep(db.pool, { retention: week, results: slow });
    assert.equal(r?.pruned?.deleted, 1, 'the sweep returned with its delete still waiting');
    assert.notEqual(await store.get(key), null);
    open();
    await ops.resultsDeleting(slow);
    assert.equal(await store.get(key), null, 'then deleted');
    fs.rmSync(store.dir, { recursive: true, force: true });
  });

  /**
   * `lockSql` ($1: a job id) held by another session, as an operator's psql left open on
   * `SELECT … FOR UPDATE` holds it (the contract lets operators query the tables), while
   * `body` sweeps through a pool like a worker's: a query gives up after a (short) lease.
   * `body` may end the other transaction itself (`commit`).
   */
  async function whileHeld(lockSql: string, id: string, body: (pool: pg.Pool, commit: () => Promise<unknown>) => Promise<void>) {
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    const pool = createPool(db.url, { name: 'sweep-held', max: 2, queryTimeoutMs: 2_000 });
    try {
      await locker.query('BEGIN');
      await locker.query(lockSql, [id]);
      await body(pool, () => locker.query('COMMIT'));
    } finally {
      await locker.query('ROLLBACK').catch(() => {});
      await locker.end();
      await pool.end();
    }
  }

  /** A running job whose worker died with a cancel asked (only the sweep moves it on), swept until it is cancelled. */
  async function sweptToCancelled(pool: pg.Pool, queue: string, timeoutMs: number) {
    const stuck = await insertJob(db.pool, { queue, status: 'running', workerId: W1, leaseInMs: -1_000, cancelRequested: true });
    await waitFor('a sweep to move the expired job on', async () => {
      await ops.recoverSweep(pool, { retention: week }).catch(() => null);
      return (await jobRow(db.pool, stuck)).status === 'cancelled';
    }, { timeoutMs });
  }

  // A finished job another transaction holds locked must not stop recovery: the prune's
  // DELETE waited for that row inside the sweep, holding the cluster-wide sweep lock; the
  // worker's query timeout gave up on the statement, but the server process went on waiting
  // (it does not notice a client gone while it waits for a lock), lock in hand, so every
  // later sweep found the lock taken and returned null — no running job with a cancel
  // request or no attempts left, nor any of a limited queue, was moved on again.
  test('a finished job locked by another transaction is left for a later walk: the sweep never waits for it', async () => {
    await freshWalk();
    const held = await finishedAgo('completed', 10);
    const free = await finishedAgo('completed', 10);
    await whileHeld('SELECT 1 FROM jobs WHERE job_id = $1 FOR UPDATE', held, async (pool, commit) => {
      await ops.recoverSweep(pool, { retention: week }).catch(() => null);
      await sweptToCancelled(pool, 'prune-held', 15_000);
      assert.deepEqual(await exists([held, free]), [held], 'the free one pruned, the held one left');
      await commit();
      await freshWalk();
      assert.equal((await ops.pruneFor(db.pool, { retention: week, restMs: 0 })).deleted, 1, 'and taken by a later walk');
    });
  });

  // The same, one step on: the attempt history of a job being pruned held locked. The
  // sweep's statement waits for it and its client gives up; the server must then end that
  // session (and free the sweep lock) rather than wait on, lock in hand, for as long as the
  // other transaction lasts.
  test('a sweep statement its client gave up on does not keep the sweep lock: the next sweeps recover', async () => {
    await freshWalk();
    const held = await finishedAgo('completed', 10);
    await whileHeld('SELECT 1 FROM ended_attempts WHERE job_id = $1 FOR UPDATE', held, async (pool) => {
      await assert.rejects(ops.recoverSweep(pool, { retention: week }), /timeout/i, 'the prune waits on the held history until the client gives up');
      await sweptToCancelled(pool, 'prune-held-history', 20_000);
    });
  });
});

describe('queue controls', () => {
  test('set, change and clear: a queue with nothing set has no row (the fast path again)', async () => {
    const c = await ops.queueSetControls(db.pool, { name: 'ctl-a', paused: true });
    assert.equal(c!.paused, true);
    const c2 = await ops.queueSetControls(db.pool, { name: 'ctl-a', concurrencyLimit: 3 });
    assert.deepEqual([c2!.paused, c2!.concurrencyLimit], [true, 3]);
    await ops.queueSetControls(db.pool, { name: 'ctl-a', paused: false, concurrencyLimit: 0 });
    assert.deepEqual(await ops.queueControls(db.pool, ['ctl-a']), []);
    await assert.rejects(ops.queueSetControls(db.pool, { name: 'ctl-a', rateLimit: 5 }), /period/);
  });

  test('the fast claims leave a controlled queue alone; the controlled claim honours pause, concurrency and rate', async () => {
    const queue = 'ctl-b';
    const ids = await Promise.all(Array.from({ length: 10 }, () => insertJob(db.pool, { queue })));
    await ops.queueSetControls(db.pool, { name: queue, paused: true });
    const p = { workerId: W1, leaseMs: LEASE };
    assert.equal((await ops.jobClaim(db.pool, { ...p, ids })).length, 0, 'claim by id refuses a controlled queue');
    assert.equal((await ops.jobClaimNext(db.pool, { ...p, queue, limit: 10 })).length, 0);
    assert.equal((await ops.jobClaimControlled(db.pool, { ...p, queue, limit: 10 })).length, 0, 'paused');
    await ops.queueSetControls(db.pool, { name: queue, paused: false, concurrencyLimit: 3 });
    assert.equal((await ops.jobClaimControlled(db.pool, { ...p, queue, limit: 10 })).length, 3);
    assert.equal((await ops.jobClaimControlled(db.pool, { ...p, workerId: W2, queue, limit: 10 })).length, 0, 'at the limit');
    await ops.queueSetControls(db.pool, { name: queue, concurrencyLimit: 0, rateLimit: 2, ratePeriodMs: 3_600_000 });
    assert.equal((await ops.jobClaimControlled(db.pool, { ...p, queue, limit: 10 })).length, 2, 'the bucket holds 2 tokens');
    assert.equal((await ops.jobClaimControlled(db.pool, { ...p, queue, limit: 10 })).length, 0, 'and is empty now');
  });

  test('concurrent controlled claims on separate connections never exceed the global limit', async () => {
    const queue = 'ctl-race';
    await Promise.all(Array.from({ length: 50 }, () => insertJob(db.pool, { queue })));
    await ops.queueSetControls(db.pool, { name: queue, concurrencyLimit: 4 });
    const got = await Promise.all(
      Array.from({ length: 12 }, (_, k) => ops.jobClaimControlled(db.pool, { queue, limit: 3, workerId: `r-${k}`, leaseMs: LEASE })),
    );
    assert.equal(got.flat().length, 4);
  });

  test('a claim that waited for the queue\'s lock counts its lease and the rate bucket from when it claimed, not from when its transaction began', async () => {
    const queue = 'ctl-waited';
    const id = await insertJob(db.pool, { queue });
    await ops.queueSetControls(db.pool, { name: queue, concurrencyLimit: 5, rateLimit: 100, ratePeriodMs: 60_000 });
    // Another claimer holds the queue's lock (as a slow or stalled one would).
    const holder = await db.pool.connect();
    let released: string;
    let claimed: Awaited<ReturnType<typeof ops.jobClaimControlled>>;
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT name FROM queues WHERE name = $1 FOR UPDATE', [queue]);
      const claim = ops.jobClaimControlled(db.pool, { queue, limit: 1, workerId: W1, leaseMs: LEASE });
      await waitFor('the claim to wait for the queue\'s lock', async () =>
        (await db.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0].n > 0,
      );
      released = (await holder.query(`SELECT clock_timestamp()::text AS t`)).rows[0].t;
      await holder.query('COMMIT');
      claimed = await claim;
    } finally {
      holder.release();
    }
    assert.deepEqual(claimed.map((j) => j.id), [id]);
    const { rows: [r] } = await db.pool.query(
      `SELECT j.started_at >= $2::timestamptz AS started_after,
              j.heartbeat_at >= $2::timestamptz AS heartbeat_after,
              j.lease_expires_at - j.started_at = $3::int * interval '1 millisecond' AS whole_lease,
              q.rate_updated_at >= $2::timestamptz AS bucket_after
         FROM jobs j, queues q WHERE j.job_id = $1 AND q.name = j.queue`,
      [id, released!, LEASE],
    );
    assert.deepEqual(r, { started_after: true, heartbeat_after: true, whole_lease: true, bucket_after: true });
  });
});

describe('schedules', () => {
  test('a due tick is enqueued exactly once by racing processes, then the schedule moves on', async () => {
    await ops.scheduleUpsert(db.pool, { name: 'every-second', cron: '* * * * * *', type: 'demo.noop', queue: 'sched' });
    await db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - interval '1 second' WHERE name = 'every-second'`);
    const made = (await Promise.all(Array.from({ length: 6 }, () => ops.scheduleTick(db.pool)))).flat();
    assert.equal(made.length, 1);
    const [s] = await ops.scheduleList(db.pool);
    assert.ok(s!.nextRunAt.getTime() > Date.now() - 1_500);
    assert.equal(s!.lastJobId, made[0]!.id);
    await assert.rejects(ops.scheduleUpsert(db.pool, { name: 'bad', cron: 'every now and then', type: 'demo.noop' }), /cron/);
  });

  test('a redefinition says what it changed from, and of the payload only whether it differs (as JSON, not as text)', async () => {
    const def = { name: 'defined-twice', cron: '0 3 * * *', type: 'demo.noop', queue: 'sched-def', payload: { a: 1, b: [2] } };
    const first = await ops.scheduleDefine(db.pool, def);
    assert.deepEqual([first.created, first.changedFrom, first.payloadChanged], [true, {}, false]);
    const same = await ops.scheduleDefine(db.pool, { ...def, payload: { b: [2], a: 1 } });
    assert.deepEqual([same.created, same.changedFrom, same.payloadChanged], [false, {}, false]);
    const changed = await ops.scheduleDefine(db.pool, { ...def, cron: '0 4 * * *', payload: { a: 2, b: [2] } });
    assert.deepEqual([changed.created, changed.changedFrom, changed.payloadChanged], [false, { cron: '0 3 * * *' }, true]);
  });

  test('a tick set by hand to a time with microseconds (SET next_run_at = now()) still ticks, once', async () => {
    await ops.scheduleUpsert(db.pool, { name: 'by-hand', cron: '0 0 1 1 *', type: 'demo.noop', queue: 'sched-hand' });
    await db.pool.query(`UPDATE schedules SET next_run_at = now() - interval '2.000123 seconds' WHERE name = 'by-hand'`);
    const made = (await Promise.all(Array.from({ length: 3 }, () => ops.scheduleTick(db.pool)))).flat();
    try {
      assert.equal(made.filter((m) => m.queue === 'sched-hand').length, 1);
      const { rows } = await db.pool.query(`SELECT next_run_at > now() AS moved_on FROM schedules WHERE name = 'by-hand'`);
      assert.equal(rows[0].moved_on, true);
    } finally {
      await db.pool.query(`DELETE FROM schedules WHERE name = 'by-hand'`);
    }
  });

  test('a schedule whose job the database refuses does not hold up the schedules due after it', async () => {
    await ops.scheduleUpsert(db.pool, { name: 'good-after-bad', cron: '* * * * * *', type: 'demo.noop', queue: 'sched-iso' });
    // Edited by hand to what a definition refuses: its job breaks jobs_max_attempts_positive.
    // (Its name, as long as a hand-made one can be, goes into its tick's key as a hash.)
    const long = 'n'.repeat(240);
    await db.pool.query(
      `INSERT INTO schedules (name, cron, timezone, queue, type, payload, max_attempts, next_run_at, enabled)
       VALUES ($1, '* * * * * *', 'UTC', 'sched-iso', 'demo.noop', '{}', 0, date_trunc('second', now()) - interval '10 seconds', true)`,
      [long],
    );
    try {
      await db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - interval '5 seconds' WHERE name = 'good-after-bad'`);
      await assert.rejects(ops.scheduleTick(db.pool), (err: Error) => err instanceof AggregateError && err.message.includes(long.slice(0, 20)));
      const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'sched-iso'`);
      assert.equal(rows[0].n, 1, 'the good schedule ticked');
    } finally {
      await db.pool.query(`DELETE FROM schedules WHERE name = ANY($1)`, [[long, 'good-after-bad']]);
    }
  });

  test('a hundred schedules that keep failing do not stop a healthy one from ticking', async () => {
    // Edited by hand to what a definition refuses (0 attempts), and due before the healthy one.
    await db.pool.query(
      `INSERT INTO schedules (name, cron, timezone, queue, type, payload, max_attempts, next_run_at, enabled)
       SELECT 'failing-' || k, '* * * * * *', 'UTC', 'sched-starve', 'demo.noop', '{}', 0, date_trunc('second', now()) - interval '1 minute', true
         FROM generate_series(1, 100) AS k`,
    );
    await ops.scheduleUpsert(db.pool, { name: 'healthy', cron: '* * * * * *', type: 'demo.noop', queue: 'sched-healthy' });
    await db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - interval '2 seconds' WHERE name = 'healthy'`);
    try {
      let ticked = 0;
      for (let k = 0; k < 3 && ticked === 0; k++) {
        await assert.rejects(ops.scheduleTick(db.pool), AggregateError);
        ticked = (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'sched-healthy'`)).rows[0].n;
      }
      assert.equal(ticked, 1, 'the healthy schedule ticked within three rounds');
    } finally {
      await db.pool.query(`DELETE FROM schedules WHERE name = 'healthy' OR name LIKE 'failing-%'`);
    }
  });

  test('a tick that cannot be enqueued is recorded on its schedule, and cleared by the tick that goes through', async () => {
    const name = 'padded-queue';
    await ops.scheduleUpsert(db.pool, { name, cron: '* * * * * *', type: 'demo.noop', queue: 'sched-err' });
    // Edited by hand to what a definition refuses: no job may have 0 attempts.
    await db.pool.query(`UPDATE schedules SET max_attempts = 0, next_run_at = date_trunc('second', now()) - interval '3 seconds' WHERE name = $1`, [name]);
    const stored = async () => (await ops.scheduleList(db.pool)).find((s) => s.name === name)!;
    try {
      await assert.rejects(ops.scheduleTick(db.pool), AggregateError);
      let s = await stored();
      assert.match(s.lastError ?? '', /attempt/, 'the reason is on the schedule');
      assert.ok(s.lastErrorAt instanceof Date);
      assert.equal(s.lastJobId, null);
      const tick = s.nextRunAt.getTime();

      // Put right by hand (not redefined): the next try goes through and clears it.
      await db.pool.query(`UPDATE schedules SET max_attempts = 3 WHERE name = $1`, [name]);
      const made = await ops.scheduleTick(db.pool);
      assert.equal(made.filter((m) => m.queue === 'sched-err').length, 1);
      s = await stored();
      assert.equal(s.lastError, null);
      assert.equal(s.lastErrorAt, null);
      assert.ok(s.nextRunAt.getTime() > tick, 'and the schedule moved on');

      // A failure then a redefinition: the error belonged to the definition replaced.
      await db.pool.query(`UPDATE schedules SET max_attempts = 0, next_run_at = date_trunc('second', now()) - interval '1 second' WHERE name = $1`, [name]);
      await assert.rejects(ops.scheduleTick(db.pool), AggregateError);
      assert.notEqual((await stored()).lastError, null);
      await ops.scheduleUpsert(db.pool, { name, cron: '0 0 1 1 *', type: 'demo.noop', queue: 'sched-err' });
      assert.equal((await stored()).lastError, null);
    } finally {
      await db.pool.query(`DELETE FROM schedules WHERE name = $1`, [name]);
    }
  });

  test('a schedule that could never tick is refused when it is defined', async () => {
    await assert.rejects(ops.scheduleUpsert(db.pool, { name: 'n'.repeat(201), cron: '* * * * *', type: 'demo.noop' }), /name must have 1 to 200/);
    await assert.rejects(ops.scheduleUpsert(db.pool, { name: 'zero', cron: '* * * * *', type: 'demo.noop', maxAttempts: 0 }), /maxAttempts/);
    await assert.rejects(ops.scheduleUpsert(db.pool, { name: 'noqueue', cron: '* * * * *', type: 'demo.noop', queue: '' }), /queue/);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM schedules WHERE name IN ('zero', 'noqueue')`)).rows[0].n, 0);
    // Accepted by the cron parser, never what was meant: an empty expression (every minute),
    // a zone that is each worker host's own.
    await assert.rejects(ops.scheduleUpsert(db.pool, { name: 'empty', cron: '  ', type: 'demo.noop' }), /empty expression/);
    for (const timezone of ['local', 'system', 'Mars/Olympus']) {
      await assert.rejects(ops.scheduleUpsert(db.pool, { name: 'tz', cron: '0 3 * * *', timezone, type: 'demo.noop' }), /not a time zone name/, timezone);
    }
    // Fewer fields the parser fills in (every minute of Mondays in April); a name that would
    // list as another; what the API's definition refuses, from every other door (the CLI, a
    // handlers module) too.
    await assert.rejects(ops.scheduleUpsert(db.pool, { name: 'short', cron: '30 4 1', type: 'demo.noop' }), /3 fields: five are needed/);
    await assert.rejects(ops.scheduleUpsert(db.pool, { name: ' spaced ', cron: '0 3 * * *', type: 'demo.noop' }), /must not start or end with whitespace/);
    const longCron = `${Array.from({ length: 60 }, (_, i) => i).join(',')} ${Array.from({ length: 24 }, (_, i) => i).join(',')} * * *`;
    await assert.rejects(ops.scheduleUpsert(db.pool, { name: 'long-cron', cron: longCron, type: 'demo.noop' }), /cron expression must have at most 200/);
    await assert.rejects(ops.scheduleUpsert(db.pool, { name: 'long-tz', cron: '0 3 * * *', timezone: 'A'.repeat(65), type: 'demo.noop' }), /time zone must have at most 64/);
    await assert.rejects(ops.scheduleUpsert(db.pool, { name: 'comma', cron: '0 3 * * *', type: 'demo.noop', queue: 'mail,sms' }), /the queue must not contain a comma/);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM schedules WHERE name IN ('short', ' spaced ', 'long-cron', 'long-tz', 'comma')`)).rows[0].n, 0);
  });

  test('an H in the cron stands for the same minute every time for one schedule', () => {
    const t0 = new Date('2030-01-01T00:00:00Z');
    let at = t0;
    const ticks: number[] = [];
    for (let k = 0; k < 5; k++) ticks.push((at = nextTick('H * * * *', 'UTC', at, 'hourly-report')).getTime());
    assert.deepEqual(ticks.slice(1).map((t, k) => t - ticks[k]!), [3_600_000, 3_600_000, 3_600_000, 3_600_000], 'hourly, no more often');
    assert.equal(nextTick('H * * * *', 'UTC', t0, 'hourly-report').getTime(), ticks[0], 'the same minute from one computation to the next');
  });

  test('switched back on, a schedule starts from its next tick: those while it was off are not owed', async () => {
    const name = 'back-on';
    try {
      await ops.scheduleUpsert(db.pool, { name, cron: '0 3 * * *', type: 'demo.noop', queue: 'sched-back', enabled: false });
      // Three days off: its stored tick is long past.
      await db.pool.query(`UPDATE schedules SET next_run_at = next_run_at - interval '3 days' WHERE name = $1`, [name]);
      const s = await ops.scheduleUpsert(db.pool, { name, cron: '0 3 * * *', type: 'demo.noop', queue: 'sched-back', enabled: true });
      assert.ok(s.nextRunAt.getTime() > Date.now(), `next tick ${s.nextRunAt.toISOString()} is ahead`);
      assert.equal((await ops.scheduleTick(db.pool)).filter((j) => j.queue === 'sched-back').length, 0);
    } finally {
      await db.pool.query(`DELETE FROM schedules WHERE name = $1`, [name]);
    }
  });

  test('a schedule redefined while a tick waits for it: the job is built from the definition the tick locked', async () => {
    const names = ['redef-a', 'redef-b'];
    const blocker = await db.pool.connect();
    try {
      for (const [k, name] of names.entries()) {
        await ops.scheduleUpsert(db.pool, { name, cron: '* * * * *', type: 'demo.noop', queue: 'sched-old', payload: { v: 'old' } });
        await db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('minute', now()) - $2::int * interval '1 minute' WHERE name = $1`, [name, 2 - k]);
      }
      // a's tick waits on an uncommitted job with its idempotency key; b is read (due) meanwhile.
      const { rows } = await db.pool.query(`SELECT next_run_at FROM schedules WHERE name = 'redef-a'`);
      await blocker.query('BEGIN');
      await blocker.query(`INSERT INTO jobs (queue, type, idempotency_key) VALUES ('sched-block', 'demo.noop', $1)`, [`schedule:redef-a:${rows[0].next_run_at.toISOString()}`]);
      const tick = ops.scheduleTick(db.pool);
      await waitFor('the tick to wait for the blocked insert', async () =>
        (await db.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0].n > 0);
      await ops.scheduleUpsert(db.pool, { name: 'redef-b', cron: '* * * * *', type: 'demo.noop', queue: 'sched-new', payload: { v: 'new' } });
      await blocker.query('ROLLBACK');
      await tick;
      const made = await db.pool.query(`SELECT queue, payload FROM jobs WHERE idempotency_key LIKE 'schedule:redef-b:%'`);
      assert.deepEqual(made.rows, [{ queue: 'sched-new', payload: { v: 'new' } }]);
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      blocker.release();
      await db.pool.query(`DELETE FROM schedules WHERE name = ANY($1)`, [names]);
    }
  });
});

describe('schedule run now, pause and resume', () => {
  const tickKeys = async (name: string) =>
    (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE idempotency_key LIKE 'schedule:' || $1 || ':%'`, [name])).rows[0].n as number;
  const stored = async (name: string) => (await ops.scheduleList(db.pool)).find((s) => s.name === name)!;

  test("run now enqueues the schedule's job once, due now, and leaves its next tick where it was", async () => {
    const name = 'run:now';
    try {
      await ops.scheduleUpsert(db.pool, { name, cron: '0 3 * * *', type: 'demo.sleep', queue: 'sched-run', payload: { ms: 7 }, maxAttempts: 5 });
      const before = await stored(name);
      const r = await ops.scheduleRunNow(db.pool, { name });
      assert.equal(r.created, true);
      assert.equal(r.schedule, name);
      const job = await jobRow(db.pool, r.id);
      assert.deepEqual([job.type, job.queue, job.payload, job.max_attempts, job.status], ['demo.sleep', 'sched-run', { ms: 7 }, 5, 'queued']);
      const { rows } = await db.pool.query(`SELECT run_at <= now() AS due FROM jobs WHERE job_id = $1`, [r.id]);
      assert.equal(rows[0].due, true, 'due now');
      // Not a tick's key, whatever colons the name has.
      assert.match(job.idempotency_key, /^schedule-run:run:now:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const after = await stored(name);
      assert.equal(after.nextRunAt.getTime(), before.nextRunAt.getTime(), 'the next tick did not move');
      assert.equal(after.lastJobId, null, "a run-now is not a tick: the last tick's job stays");
    } finally {
      await db.pool.query(`DELETE FROM schedules WHERE name = $1`, [name]);
    }
  });

  test('a schedule whose name is too long for a key whole (made by hand) runs now under its hash, once', async () => {
    const short = 'run-long';
    const name = 'x'.repeat(230);
    try {
      await ops.scheduleUpsert(db.pool, { name: short, cron: '0 3 * * *', type: 'demo.noop', queue: 'sched-long' });
      await db.pool.query(`UPDATE schedules SET name = $2 WHERE name = $1`, [short, name]);
      const r = await ops.scheduleRunNow(db.pool, { name });
      assert.equal(r.created, true);
      assert.match((await jobRow(db.pool, r.id)).idempotency_key, /^schedule-run:#[0-9a-f]{64}:\d{4}-/);
      assert.deepEqual([(await ops.scheduleRunNow(db.pool, { name })).id], [r.id], 'a repeat finds it by the same key');
    } finally {
      await db.pool.query(`DELETE FROM schedules WHERE name IN ($1, $2)`, [short, name]);
    }
  });

  test('a double run (a double click, a retried request, two at once) enqueues one job', async () => {
    const name = 'run-twice';
    try {
      await ops.scheduleUpsert(db.pool, { name, cron: '0 3 * * *', type: 'demo.noop', queue: 'sched-twice' });
      const runs = await Promise.all(Array.from({ length: 5 }, () => ops.scheduleRunNow(db.pool, { name })));
      const again = await ops.scheduleRunNow(db.pool, { name });
      assert.equal(new Set([...runs, again].map((r) => r.id)).size, 1, JSON.stringify(runs));
      assert.equal([...runs, again].filter((r) => r.created).length, 1);
      const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'sched-twice'`);
      assert.equal(rows[0].n, 1);
    } finally {
      await db.pool.query(`DELETE FROM schedules WHERE name = $1`, [name]);
    }
  });

  test("a run-now just after a second's boundary finds the one just before it; two seconds later is a new run", async () => {
    const name = 'run-boundary';
    try {
      await ops.scheduleUpsert(db.pool, { name, cron: '0 3 * * *', type: 'demo.noop', queue: 'sched-boundary' });
      // A run-now of the second before this one (a double click across the boundary).
      const { rows: [{ at }] } = await db.pool.query(`SELECT floor(extract(epoch FROM clock_timestamp()))::bigint AS at`);
      const earlier = await ops.jobEnqueue(db.pool, [{ type: 'demo.noop', queue: 'sched-boundary', idempotencyKey: ops.runNowKey(name, Number(at) - 1) }]);
      const r = await ops.scheduleRunNow(db.pool, { name });
      // The clock may have moved past the next second meanwhile: then the run is a new one.
      const { rows: [{ now }] } = await db.pool.query(`SELECT floor(extract(epoch FROM clock_timestamp()))::bigint AS now`);
      if (Number(now) === Number(at)) assert.deepEqual([r.id, r.created], [earlier[0]!.id, false]);
      // Two seconds back is outside the window: a deliberate second run.
      await db.pool.query(`UPDATE jobs SET idempotency_key = $2 WHERE idempotency_key LIKE 'schedule-run:' || $1 || ':%'`, [name, ops.runNowKey(name, Number(at) - 3)]);
      const later = await ops.scheduleRunNow(db.pool, { name });
      assert.equal(later.created, true);
    } finally {
      await db.pool.query(`DELETE FROM schedules WHERE name = $1`, [name]);
    }
  });

  test('run now of no such schedule is not_found and enqueues nothing', async () => {
    await assert.rejects(ops.scheduleRunNow(db.pool, { name: 'no-such' }), (e: Error & { code?: string }) => e.code === 'not_found');
    await assert.rejects(ops.schedulePause(db.pool, 'no-such'), (e: Error & { code?: string }) => e.code === 'not_found');
    await assert.rejects(ops.scheduleResume(db.pool, 'no-such'), (e: Error & { code?: string }) => e.code === 'not_found');
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE idempotency_key LIKE 'schedule-run:no-such:%'`);
    assert.equal(rows[0].n, 0);
  });

  test('a paused schedule enqueues no tick, however long it is due; a second pause changes nothing', async () => {
    const name = 'paused-every-second';
    try {
      await ops.scheduleUpsert(db.pool, { name, cron: '* * * * * *', type: 'demo.noop', queue: 'sched-paused' });
      const p = await ops.schedulePause(db.pool, name);
      assert.deepEqual([p.changed, p.schedule.paused, p.schedule.enabled], [true, true, true]);
      assert.ok(p.schedule.pausedAt);
      const again = await ops.schedulePause(db.pool, name);
      assert.equal(again.changed, false);
      assert.equal(again.schedule.pausedAt!.getTime(), p.schedule.pausedAt!.getTime(), 'paused since the first pause');
      await db.pool.query(`UPDATE schedules SET next_run_at = now() - interval '1 hour' WHERE name = $1`, [name]);
      for (let k = 0; k < 3; k++) await ops.scheduleTick(db.pool);
      assert.equal(await tickKeys(name), 0, 'no tick while paused');
      // A worker start upserts the definition again: the pause holds.
      await ops.scheduleUpsert(db.pool, { name, cron: '* * * * * *', type: 'demo.noop', queue: 'sched-paused' });
      await ops.scheduleTick(db.pool);
      assert.equal(await tickKeys(name), 0, 'still none after the definition is upserted again');
      assert.equal((await stored(name)).paused, true);
      // Run now works on a paused schedule, and leaves it paused.
      assert.equal((await ops.scheduleRunNow(db.pool, { name })).created, true);
      assert.equal((await stored(name)).paused, true);
    } finally {
      await db.pool.query(`DELETE FROM schedules WHERE name = $1`, [name]);
    }
  });

  test('resumed, a schedule starts from its next tick after now: the ticks missed while paused are not owed', async () => {
    const name = 'resumed-hourly';
    try {
      await ops.scheduleUpsert(db.pool, { name, cron: '0 * * * *', type: 'demo.noop', queue: 'sched-resumed' });
      await ops.schedulePause(db.pool, name);
      // Paused for three days (and the tick it stopped at failing): 72 hourly ticks missed.
      await db.pool.query(
        `UPDATE schedules SET next_run_at = date_trunc('hour', now()) - interval '3 days', last_error = 'boom', last_error_at = now() - interval '3 days' WHERE name = $1`,
        [name],
      );
      const r = await ops.scheduleResume(db.pool, name);
      assert.deepEqual([r.changed, r.schedule.paused, r.schedule.pausedAt, r.schedule.lastError], [true, false, null, null]);
      const { rows: [{ now }] } = await db.pool.query(`SELECT now()`);
      assert.ok(r.schedule.nextRunAt > now, `next tick ${r.schedule.nextRunAt.toISOString()} is after now`);
      assert.equal(r.schedule.nextRunAt.getTime(), nextTick('0 * * * *', 'UTC', now, name).getTime(), 'the first hour after now');
      assert.equal((await ops.scheduleTick(db.pool)).filter((j) => j.queue === 'sched-resumed').length, 0, 'no burst of missed ticks');
      assert.equal(await tickKeys(name), 0);
      assert.equal((await ops.scheduleResume(db.pool, name)).changed, false, 'resuming a running schedule changes nothing');
      // And it ticks again once that tick is due.
      await db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - interval '1 second' WHERE name = $1`, [name]);
      assert.equal((await ops.scheduleTick(db.pool)).filter((j) => j.queue === 'sched-resumed').length, 1);
    } finally {
      await db.pool.query(`DELETE FROM schedules WHERE name = $1`, [name]);
    }
  });
});

describe('queue controls', () => {
  test('a pause does not refill the rate limit: resumed, the queue has what it had left', async () => {
    const queue = 'rate-pause';
    await ops.queueSetControls(db.pool, { name: queue, rateLimit: 2, ratePeriodMs: 3_600_000 });
    await Promise.all(Array.from({ length: 5 }, () => insertJob(db.pool, { queue })));
    const claim = async () => (await ops.jobClaimControlled(db.pool, { queue, limit: 5, workerId: W1, leaseMs: LEASE })).length;
    assert.equal(await claim(), 2);
    assert.equal(await claim(), 0, 'the hour\'s two are spent');
    await ops.queueSetControls(db.pool, { name: queue, paused: true });
    assert.equal(await claim(), 0, 'paused');
    await ops.queueSetControls(db.pool, { name: queue, paused: false });
    assert.equal(await claim(), 0, 'resumed, still spent');
  });
});

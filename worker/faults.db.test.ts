/**
 * Faults of a single worker host, with real worker processes (the supervisor and its
 * children, started with node) against the real PostgreSQL and Redis:
 *  - its wall clock stepped an hour forward, then back, while a job runs (libfaketime);
 *  - a handler that blocks its event loop for one and a half leases, then returns.
 * What must hold: lease arithmetic is the database's (a worker's clock moves no lease),
 * the worker's own timers are monotonic, and a completion written after the lease was lost
 * is refused by the fence.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { createPool } from '../lib/db/client';
import { createLogger } from '../lib/log';
import * as ops from '../lib/queue/ops';
import { RedisDoorbell } from '../lib/queue/signal';
import { cleanup } from '../test/cleanup';
import { testDatabase } from '../test/db';
import { REDIS_URL } from '../test/env';
import { insertJob, jobRow } from '../test/factories';
import { root, startWorkers, uniquePrefix } from '../test/processes';
import { waitFor } from '../test/wait';

const db = await testDatabase();
const quiet = createLogger({ test: 'faults' });
const HANDLERS = path.join(root, 'test/handlers/faults.ts');
const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-faults-'));
cleanup(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The ledger the handlers keep: one [event, job, attempt, pid] per line. */
function ledger(file: string): [string, string, number, number][] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [event, job, attempt, pid] = l.split(' ');
      return [event!, job!, Number(attempt), Number(pid)];
    });
}

async function attempts(jobId: string) {
  const { rows } = await db.pool.query('SELECT attempt, worker_id, outcome, error FROM job_attempts WHERE job_id = $1 ORDER BY attempt', [jobId]);
  return rows as { attempt: number; worker_id: string; outcome: string; error: string | null }[];
}

async function typesRegistered(...names: string[]) {
  await waitFor(`${names.join(', ')} to be registered`, async () =>
    (await db.pool.query(`SELECT count(*)::int AS n FROM job_types WHERE name = ANY($1)`, [names])).rows[0].n === names.length,
  );
}

describe('the wall clock stepped under a running job', () => {
  const missing = fs.existsSync(FAKETIME_LIB) ? false : `libfaketime is not installed (${FAKETIME_LIB}): apt-get install -y faketime`;

  test('+1 h then -1 h mid-job: the lease follows the database clock, renewals go on, the job completes once in one attempt, and the timers still claim new work after the step back', { skip: missing }, async () => {
    const prefix = uniquePrefix('clock-step');
    const queue = prefix;
    const leaseMs = 2_000;
    const dir = fs.mkdtempSync(path.join(tmp, 'clock-'));
    const stamp = path.join(dir, 'faketime');
    const files = { ledger: path.join(dir, 'ledger'), until: path.join(dir, 'until'), clock: path.join(dir, 'clock') };
    fs.writeFileSync(stamp, '+0\n');
    const pool = createPool(db.url, { max: 2 });
    const doorbell = new RedisDoorbell(REDIS_URL, prefix, pool, quiet);
    const w = startWorkers({
      databaseUrl: db.url,
      redisUrl: REDIS_URL,
      prefix,
      processes: 1,
      concurrency: 2,
      queues: queue,
      leaseMs,
      extra: {
        LEASEHOLD_HANDLERS: HANDLERS,
        LEASEHOLD_RESULTS_DIR: path.join(dir, 'results'),
        LD_PRELOAD: FAKETIME_LIB,
        // The offset is read from this file on every clock read, so it can change while the
        // processes run. The monotonic clock is left alone, as a real step (NTP, an operator's
        // `date -s`, a VM resumed) leaves it: that is the clock timers and the watchdog use.
        FAKETIME_TIMESTAMP_FILE: stamp,
        FAKETIME_NO_CACHE: '1',
        FAKETIME_DONT_FAKE_MONOTONIC: '1',
        FAKETIME: undefined,
      },
    });
    try {
      await typesRegistered('test.wait');
      const [job] = await ops.jobEnqueue(pool, [{ type: 'test.wait', queue, payload: files, maxAttempts: 3 }], { doorbell });
      const id = job!.id;
      await waitFor('the job to start', () => fs.existsSync(files.clock));
      const owner = (await jobRow(db.pool, id)).worker_id as string;

      /** Waits until the handler's process reads its wall clock `offsetMs` away from ours. */
      const stepTo = async (offsetMs: number) => {
        fs.writeFileSync(stamp, `${offsetMs >= 0 ? '+' : ''}${offsetMs / 1000}\n`);
        await waitFor(`the worker's wall clock to read ${offsetMs / 1000} s off`, () => {
          const theirs = Number(fs.readFileSync(files.clock, 'utf8'));
          return Math.abs(theirs - Date.now() - offsetMs) < 30_000;
        }, { timeoutMs: 20_000 });
      };

      /**
       * For two leases of database time after the step, every look at the job finds it running
       * under its first and only lease, held by the same worker, renewed (its heartbeat
       * advancing), and its end within one lease of the database's now(): never past it (lost
       * early) and never an hour beyond it (extended on the worker's clock).
       */
      const leaseHolds = async (what: string) => {
        const t0 = (await db.pool.query('SELECT now() AS t')).rows[0].t as Date;
        const seen = new Set<number>();
        // Every look is judged, not only the last (a wait retries a probe that throws).
        const wrong: string[] = [];
        await waitFor(`two leases of database time after the step (${what})`, async () => {
          const { rows } = await db.pool.query(
            `SELECT status, worker_id, attempt_count, heartbeat_at,
                    extract(epoch FROM lease_expires_at - now()) * 1000 AS remaining_ms,
                    now() > $2::timestamptz + $3::int * interval '1 ms' AS done
               FROM jobs WHERE job_id = $1`,
            [id, t0, 2 * leaseMs],
          );
          const r = rows[0];
          const remaining = Number(r.remaining_ms);
          if (r.status !== 'running' || r.worker_id !== owner || r.attempt_count !== 1) wrong.push(`${r.status} by ${r.worker_id}, attempt ${r.attempt_count}`);
          else if (!(remaining > 0)) wrong.push(`the lease ended ${-remaining} ms ago`);
          else if (remaining > leaseMs + 100) wrong.push(`the lease runs ${remaining} ms more, past one lease`);
          if ((r.heartbeat_at as Date) > t0) seen.add((r.heartbeat_at as Date).getTime());
          return (r.done && seen.size >= 2) || wrong.length > 0;
        }, { timeoutMs: 30_000, intervalMs: 100 });
        assert.deepEqual(wrong, [], what);
        assert.ok(seen.size >= 2, `${what}: renewals seen ${seen.size}`);
      };

      await stepTo(3_600_000);
      await leaseHolds('after +1 h');
      await stepTo(-3_600_000);
      await leaseHolds('after -1 h');

      // After the step back: a job rung through Redis, and one written straight to the table
      // (no ring: found only by the worker's poll or its recover sweep re-ringing it).
      const [rung] = await ops.jobEnqueue(pool, [{ type: 'demo.sleep', queue, payload: { ms: 1 } }], { doorbell });
      const silent = await insertJob(db.pool, { queue, type: 'demo.sleep', payload: { ms: 1 } });
      await waitFor('the rung and the unrung job to complete', async () =>
        (await jobRow(db.pool, rung!.id)).status === 'completed' && (await jobRow(db.pool, silent)).status === 'completed',
      { timeoutMs: 20_000 });

      fs.writeFileSync(files.until, '');
      await waitFor('the waiting job to complete', async () => (await jobRow(db.pool, id)).status === 'completed', { timeoutMs: 20_000 });
      const row = await jobRow(db.pool, id);
      assert.equal(row.attempt_count, 1);
      assert.deepEqual((await attempts(id)).map((a) => [a.attempt, a.worker_id, a.outcome]), [[1, owner, 'completed']]);
      assert.deepEqual(ledger(files.ledger).map(([e, , a]) => [e, a]), [['start', 1], ['end', 1]], 'one start, one end');
      assert.doesNotMatch(w.output(), /lease (lost|renewal failed)|expired_locally|refused by the fence|WARN|ERROR/, 'the worker noticed nothing wrong');
    } finally {
      await w.stop();
      await doorbell.close();
      await pool.end();
    }
  });
});

describe('an event loop blocked for one and a half leases', () => {
  test('the lease is lost and another process completes the job; the blocked handler, returning late, writes nothing; the supervisor leaves its process alone (below its stall limit)', async () => {
    const prefix = uniquePrefix('block');
    const queue = prefix;
    // A lease of 4 s leaves the other process 2 s to take the job over before the block ends
    // (its poll and sweep every 0.5 s), on a loaded machine too. The supervisor's stall limit
    // is max(2 leases, 10 s) = 10 s: the 6 s block stays below it.
    const leaseMs = 4_000;
    const blockMs = 1.5 * leaseMs;
    const dir = fs.mkdtempSync(path.join(tmp, 'block-'));
    const file = path.join(dir, 'ledger');
    const pool = createPool(db.url, { max: 2 });
    const doorbell = new RedisDoorbell(REDIS_URL, prefix, pool, quiet);
    const w = startWorkers({
      databaseUrl: db.url,
      redisUrl: REDIS_URL,
      prefix,
      processes: 2,
      concurrency: 1,
      queues: queue,
      leaseMs,
      heartbeatMs: 500,
      recoverMs: 500,
      pollMs: 500,
      extra: { LEASEHOLD_HANDLERS: HANDLERS, LEASEHOLD_RESULTS_DIR: path.join(dir, 'results') },
    });
    const workers = async () =>
      (await db.pool.query(`SELECT worker_id, pid, exit, stopped_at, heartbeat_at FROM workers WHERE $1 = ANY(queues) ORDER BY worker_id`, [queue])).rows;
    try {
      await typesRegistered('test.block');
      await waitFor('both worker processes to register', async () => (await workers()).length === 2);
      const [job] = await ops.jobEnqueue(pool, [{ type: 'test.block', queue, payload: { ledger: file, ms: blockMs }, maxAttempts: 3 }], { doorbell });
      const id = job!.id;
      await waitFor('the job to complete', async () => (await jobRow(db.pool, id)).status === 'completed', { timeoutMs: 60_000 });
      // The blocked handler returned too (after the other process had taken the job over).
      await waitFor('the blocked handler to return', () => ledger(file).some(([e, , a]) => e === 'end' && a === 1), { timeoutMs: 30_000 });
      const runs = ledger(file);
      const first = runs.filter(([, , a]) => a === 1);
      const second = runs.filter(([, , a]) => a === 2);
      assert.deepEqual(first.map(([e]) => e), ['start', 'end']);
      assert.deepEqual(second.map(([e]) => e), ['start', 'end']);
      const blockedPid = first[0]![3];
      assert.notEqual(second[0]![3], blockedPid, 'the second attempt ran in the other process');

      // Its completion, sent late, is settled one way or the other (the process's counters,
      // reported with its heartbeats): refused by the fence, not accepted.
      const settled = await waitFor('the blocked process to report how its completion ended', async () => {
        const { rows } = await db.pool.query(
          `SELECT (metrics->>'completed')::int AS completed, (metrics->>'refusedWrites')::int AS refused FROM workers WHERE $1 = ANY(queues) AND pid = $2`,
          [queue, blockedPid],
        );
        const m = rows[0];
        return m && m.completed + m.refused >= 1 ? m : null;
      }, { timeoutMs: 10_000 });
      assert.deepEqual(settled, { completed: 0, refused: 1 });
      const row = await jobRow(db.pool, id);
      assert.equal(row.attempt_count, 2);
      assert.match(row.result_key, new RegExp(`^${id}/2-`), "the job's result is the second attempt's");
      const att = await attempts(id);
      assert.deepEqual(att.map((a) => [a.attempt, a.outcome]), [[1, 'lease_lost'], [2, 'completed']]);
      assert.match(att[0]!.worker_id, new RegExp(`:${blockedPid}:`));
      assert.doesNotMatch(att[1]!.worker_id, new RegExp(`:${blockedPid}:`));
      assert.match(att[0]!.error ?? '', /stopped renewing/);

      // Its late completion was sent and refused by the fence: the handler's return is handled
      // (in the microtasks right after the block) before any timer of the process runs, so
      // the worker cannot have learnt of the loss first.
      await waitFor('the blocked process to say the fence refused its completion', () =>
        w.output().split('\n').some((l) => l.includes('outcome refused by the fence') && l.includes(`pid=${blockedPid} job=${id} attempt=1`)),
      { timeoutMs: 10_000 });
      // No second completion anywhere: one completed attempt, the first one's result file deleted.
      assert.equal(att.filter((a) => a.outcome === 'completed').length, 1);
      const kept = fs.existsSync(path.join(dir, 'results', id)) ? fs.readdirSync(path.join(dir, 'results', id)) : [];
      assert.ok(kept.every((k) => k.startsWith('2-')), `result files left: ${kept.join(', ')}`);

      // The block (6 s) is below the supervisor's stall limit (10 s): the process was not
      // killed, and it runs on, renewing its worker row.
      const after = (await db.pool.query('SELECT now() AS t')).rows[0].t as Date;
      await waitFor('the blocked process to report again', async () =>
        (await workers()).some((r) => r.pid === blockedPid && r.stopped_at === null && r.exit === null && (r.heartbeat_at as Date) > after),
      { timeoutMs: 10_000 });
      assert.equal((await workers()).length, 2, 'no process was replaced');
      assert.doesNotMatch(w.output(), /has not run its event loop|worker process died/);
      process.kill(blockedPid, 0); // still alive
    } finally {
      await w.stop();
      await doorbell.close();
      await pool.end();
    }
  });
});

/**
 * Real worker processes (the supervisor and its children, started with node) against the
 * real PostgreSQL and Redis: recover, poison jobs, the supervisor, and Redis going away.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { createPool } from '../lib/db/client';
import { createLogger } from '../lib/log';
import * as ops from '../lib/queue/ops';
import { listWorkers } from '../lib/queue/read';
import { RedisDoorbell } from '../lib/queue/signal';
import { testDatabase } from '../test/db';
import { REDIS_URL } from '../test/env';
import { insertJob, jobRow } from '../test/factories';
import { type Proc, root, startNode, startWorkers, tsx, uniquePrefix, workerEnv } from '../test/processes';
import { ownRedis } from '../test/redis-server';
import { waitFor } from '../test/wait';
import { readHeldLedger } from './held-ledger';

const db = await testDatabase();
const quiet = createLogger({ test: 'worker' });

async function completedIn(queue: string) {
  const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = $1 AND status = 'completed'`, [queue]);
  return rows[0].n as number;
}

/**
 * Waits until each of these worker processes has reported more than a second after now (the
 * database clock): with the tests' heartbeats, at least two more heartbeats each, and the polls
 * between them — the chances a quiet worker had to claim.
 */
async function heartbeatsSince(what: string, workerIds: readonly string[]) {
  const since = (await db.pool.query(`SELECT now() AS t`)).rows[0].t as Date;
  await waitFor(what, async () =>
    (await db.pool.query(`SELECT count(*)::int AS n FROM workers WHERE worker_id = ANY($1) AND heartbeat_at > $2::timestamptz + interval '1 s'`, [workerIds, since])).rows[0].n === workerIds.length);
}

/** Alive, and not a zombie waiting for whoever adopted it to reap it. */
function alive(pid: number) {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * A queue of its own served by the handlers of test/handlers/faults.ts (test.wait, test.block,
 * which keep a ledger of their starts and ends), a producer's pool and doorbell on its Redis
 * prefix, and a scratch directory; `host` is the environment of a supervisor on it, with a
 * ten-minute lease (a job left to its lease would wait far past these tests' waits).
 */
function faultRig(what: string, extra: Record<string, string> = {}) {
  const prefix = uniquePrefix(what);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `lh-${what}-`));
  const pool = createPool(db.url, { max: 2 });
  const doorbell = new RedisDoorbell(REDIS_URL, prefix, pool, quiet);
  const ledger = path.join(dir, 'ledger');
  return {
    queue: prefix,
    dir,
    ledger,
    host: {
      databaseUrl: db.url,
      redisUrl: REDIS_URL,
      prefix,
      queues: prefix,
      leaseMs: 600_000,
      extra: { LEASEHOLD_HANDLERS: path.join(root, 'test/handlers/faults.ts'), LEASEHOLD_RESULTS_DIR: path.join(dir, 'results'), ...extra },
    },
    enqueue: (jobs: { type: string; payload: unknown }[]) => ops.jobEnqueue(pool, jobs.map((j) => ({ ...j, queue: prefix, maxAttempts: 3 })), { doorbell }),
    /** test.wait until the file `until` exists. */
    waitJob: (until: string, k = 0) => ({ type: 'test.wait', payload: { ledger, until, clock: path.join(dir, `clock-${k}`) } }),
    /** The handlers are registered: a supervisor on the queue has started. */
    registered: () => waitFor('the fault handlers to be registered', async () => (await db.pool.query(`SELECT 1 FROM job_types WHERE name = 'test.block'`)).rows.length === 1),
    workers: async () => (await db.pool.query(`SELECT worker_id, pid, stopped_at IS NOT NULL AS stopped, exit FROM workers WHERE $1 = ANY(queues) ORDER BY worker_id`, [prefix])).rows,
    close: async () => {
      await doorbell.close();
      await pool.end();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('recover', () => {
  test('a queued job with no Redis entry and a running job with an expired lease both run to completion; a live lease is left alone', async () => {
    const prefix = uniquePrefix('recover');
    const queue = prefix;
    // Written straight to the table: no doorbell ever rang for these.
    const orphan = await insertJob(db.pool, { queue, payload: { ms: 10 } });
    const expired = await insertJob(db.pool, { queue, status: 'running', workerId: 'crashed-host:1:dead', leaseInMs: -5_000, payload: { ms: 10 } });
    const live = await insertJob(db.pool, { queue, status: 'running', workerId: 'busy-host:2:live', leaseInMs: 3_600_000, payload: { ms: 10 } });
    const w = startWorkers({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix, processes: 1, concurrency: 4, queues: queue });
    try {
      await waitFor('the orphan and the expired job to complete', async () => (await completedIn(queue)) === 2);
      assert.equal((await jobRow(db.pool, orphan)).status, 'completed');
      const exp = await jobRow(db.pool, expired);
      assert.deepEqual([exp.status, exp.attempt_count], ['completed', 2]);
      const { rows } = await db.pool.query('SELECT worker_id, outcome FROM job_attempts WHERE job_id = $1 ORDER BY attempt', [expired]);
      assert.deepEqual(rows[0], { worker_id: 'crashed-host:1:dead', outcome: 'lease_lost' });
      const l = await jobRow(db.pool, live);
      assert.deepEqual([l.status, l.worker_id, l.attempt_count], ['running', 'busy-host:2:live', 1]);
    } finally {
      await w.stop();
    }
  });
});

describe('a claim held up past the lease', () => {
  test("a claim waiting on a locked row is given up by the server too: it never commits later, leasing the job unrun on a lease already out", async () => {
    const prefix = uniquePrefix('held-claim');
    const queue = prefix;
    const job = await insertJob(db.pool, { queue, payload: { ms: 10 }, maxAttempts: 1 });
    // Another session holds the job's row (an operator's open transaction, a stalled backend):
    // the worker's claim of it by id waits.
    const holder = await db.pool.connect();
    const producer = createPool(db.url, { max: 1 });
    const doorbell = new RedisDoorbell(REDIS_URL, prefix, producer, quiet);
    const w = startWorkers({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix, processes: 1, concurrency: 2, queues: queue, leaseMs: 2_000 });
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM jobs WHERE job_id = $1 FOR UPDATE', [job]);
      const holderPid = (await holder.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      const blocked = async () => (await db.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [holderPid])).rows[0].n as number;
      await waitFor('the worker to come up', async () => (await db.pool.query(`SELECT 1 FROM workers WHERE $1 = ANY(queues) AND stopped_at IS NULL`, [queue])).rows.length > 0);
      await doorbell.ring([{ jobId: job, queue }]);
      await waitFor("the worker's claim to wait on the row", async () => (await blocked()) > 0);
      // Past the worker's wait (its lease), the server has ended the claim: nothing waits on
      // the row any more. Before, the statement went on waiting, to commit once the row was
      // free, its lease counted from when it began.
      await waitFor('the claim to be given up on the server', async () => (await blocked()) === 0, { timeoutMs: 20_000 });
      await holder.query('COMMIT');
      await waitFor('the job to complete', async () => (await jobRow(db.pool, job)).status === 'completed');
      const row = await jobRow(db.pool, job);
      const { rows } = await db.pool.query('SELECT attempt, outcome FROM job_attempts WHERE job_id = $1 ORDER BY attempt', [job]);
      assert.deepEqual(
        [row.attempt_count, rows],
        [1, [{ attempt: 1, outcome: 'completed' }]],
        'run once, on its one attempt: no attempt lost to a lease that had run out before the claim committed',
      );
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
      await w.stop();
      await doorbell.close();
      await producer.end();
    }
  });
});

describe('poison jobs', () => {
  test('demo.sleep {crash:true} with maxAttempts 3 ends failed after exactly 3 claims while the other jobs complete', async () => {
    const prefix = uniquePrefix('poison');
    const queue = prefix;
    const pool = createPool(db.url, { max: 2 });
    const doorbell = new RedisDoorbell(REDIS_URL, prefix, pool, quiet);
    const w = startWorkers({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix, processes: 2, concurrency: 5, queues: queue });
    try {
      const [poison] = await ops.jobEnqueue(pool, [{ type: 'demo.sleep', queue, payload: { ms: 0, crash: true }, maxAttempts: 3 }], { doorbell });
      const others = await ops.jobEnqueue(
        pool,
        Array.from({ length: 40 }, () => ({ type: 'demo.sleep', queue, payload: { ms: 50 } })),
        { doorbell },
      );
      await waitFor('the poison job to reach the dead letter', async () => (await jobRow(db.pool, poison!.id)).status === 'failed', { timeoutMs: 90_000 });
      await waitFor('every other job to complete', async () => (await completedIn(queue)) === others.length, { timeoutMs: 90_000 });
      const p = await jobRow(db.pool, poison!.id);
      assert.equal(p.attempt_count, 3, 'exactly 3 claims');
      const { rows } = await db.pool.query('SELECT outcome, error FROM job_attempts WHERE job_id = $1 ORDER BY attempt', [poison!.id]);
      assert.deepEqual(rows.map((r) => r.outcome), ['lease_lost', 'lease_lost', 'lease_lost']);
      // The dead letter says how its worker ended (its supervisor saw it), not only that it stopped renewing.
      assert.match(p.error, /stopped renewing \(killed by SIGKILL\)/);
      for (const r of rows) assert.match(r.error, /killed by SIGKILL/);
      assert.match(w.output(), /worker process died; replacing it/);
    } finally {
      await w.stop();
      await doorbell.close();
      await pool.end();
    }
  });
});

describe('jobs claimed ahead (--prefetch) when their process is killed', () => {
  /** One supervised process, one slot, claiming `prefetch` ahead: PostgreSQL-only, so a claim takes every due job at once. */
  const start = (prefix: string, prefetch: number) =>
    startNode('worker/bin/worker.ts', ['--processes', '1', '--concurrency', '1', '--queues', prefix, '--prefetch', String(prefetch)], workerEnv({ databaseUrl: db.url, redisUrl: null, prefix }));
  const attempts = async (ids: string[]) =>
    (await db.pool.query(`SELECT job_id::text AS id, outcome, error FROM ended_attempts WHERE job_id = ANY($1) ORDER BY job_id, attempt`, [ids])).rows;

  test('those held and never started get their attempt back from the supervisor: a job allowed one attempt still runs', async () => {
    const prefix = uniquePrefix('held');
    // The poison first (claims take the lowest id first at one priority): it runs on the one
    // slot and kills the process, while the claim holds the 20 others ahead.
    const [poison] = await ops.jobEnqueue(db.pool, [{ type: 'demo.sleep', queue: prefix, payload: { ms: 0, crash: true }, maxAttempts: 1 }]);
    const held = (await ops.jobEnqueue(db.pool, Array.from({ length: 20 }, () => ({ type: 'demo.noop', queue: prefix, maxAttempts: 1 })))).map((r) => r.id);
    const w = start(prefix, 20);
    try {
      await waitFor('the held jobs to complete', async () =>
        (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1) AND status = 'completed'`, [held])).rows[0].n === held.length, { timeoutMs: 90_000 });
      // It ran: its one attempt is spent, and it is in the dead letter.
      await waitFor('the poison to reach the dead letter', async () => (await jobRow(db.pool, poison!.id)).status === 'failed', { timeoutMs: 60_000 });
      assert.deepEqual((await attempts([poison!.id])).map((a) => a.outcome), ['lease_lost']);
      const history = await attempts(held);
      assert.deepEqual(
        [...new Set(history.map((a) => `${a.outcome}: ${a.error ?? ''}`))].sort(),
        ['aborted: claimed ahead; its worker process ended before it started', 'completed: '],
        'each held job: the attempt given back, then one that completed',
      );
      assert.equal(history.length, 2 * held.length);
      assert.match(w.output(), /jobs a worker process held claimed ahead, never started, are queued again with their attempts back/);
    } finally {
      await w.stop();
    }
  });

  test('on Redis, the jobs given back are rung: a live peer takes them at once, not at its next poll or sweep', async () => {
    const prefix = uniquePrefix('heldrung');
    const pool = createPool(db.url, { max: 2 });
    const doorbell = new RedisDoorbell(REDIS_URL, prefix, pool, quiet);
    // Polls and sweeps ten minutes apart, leases of a minute: within the test's deadline, a
    // process waiting on Redis gets a job only by its ring. (A replacement claims what is due as it starts.)
    const supervisor = () => startNode('worker/bin/worker.ts', ['--processes', '1', '--concurrency', '1', '--queues', prefix, '--prefetch', '20'],
      workerEnv({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix, pollMs: 600_000, recoverMs: 600_000, leaseMs: 60_000 }));
    const live = async () => (await db.pool.query(`SELECT worker_id, pid FROM workers WHERE $1 = ANY(queues) AND stopped_at IS NULL`, [prefix])).rows;
    const first = supervisor();
    let second: Proc | null = null;
    let holderPid: number | null = null;
    try {
      await waitFor('the first process to register', async () => (await live()).length === 1);
      const [holder] = await live();
      holderPid = holder.pid;
      // Busy with a long job, so what it claims next it holds.
      const [long] = await ops.jobEnqueue(pool, [{ type: 'demo.sleep', queue: prefix, payload: { ms: 120_000 } }], { doorbell });
      await waitFor('the long job to start', async () => (await jobRow(db.pool, long!.id)).status === 'running');
      const noops = (await ops.jobEnqueue(pool, Array.from({ length: 20 }, () => ({ type: 'demo.noop', queue: prefix })), { doorbell })).map((r) => r.id);
      const heldBy = async (workerId: string) =>
        (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1) AND status = 'running' AND worker_id = $2`, [noops, workerId])).rows[0].n as number;
      // Stopped as soon as it holds some on file (it would hand them back itself after
      // PREFETCH_HOLD_MS). On file, not only running in the database: a claim commits before
      // its jobs are written down, and a process stopped between the two holds jobs its
      // supervisor cannot know of (they are charged, as held-ledger.ts says).
      const ledger = () => {
        const name = fs.readdirSync(os.tmpdir()).find((n) => n.startsWith(`leasehold-held-${first.pid}-0-0-`));
        return name ? (readHeldLedger(path.join(os.tmpdir(), name))?.leases.length ?? 0) : 0;
      };
      await waitFor('it to hold some, on file for its supervisor', async () => ledger() > 0, { intervalMs: 10 });
      process.kill(holder.pid, 'SIGSTOP');
      // The peer: another supervisor's process, up and waiting on Redis.
      second = supervisor();
      await waitFor('the peer to register', async () => (await live()).length === 2);
      const peer = (await live()).find((r) => r.worker_id !== holder.worker_id)!;
      assert.ok((await heldBy(holder.worker_id)) > 0, 'still held when it is killed');
      process.kill(holder.pid, 'SIGKILL');
      await waitFor('every job but the long one to complete', async () =>
        (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1) AND status = 'completed'`, [noops])).rows[0].n === noops.length, { timeoutMs: 60_000 });
      const { rows } = await db.pool.query(
        `SELECT a.job_id::text AS id, a.worker_id
           FROM ended_attempts a JOIN ended_attempts g ON g.job_id = a.job_id AND g.outcome = 'aborted' AND g.error = 'claimed ahead; its worker process ended before it started'
          WHERE a.job_id = ANY($1) AND a.outcome = 'completed'`,
        [noops],
      );
      assert.ok(rows.length > 0, 'the killed process held jobs, given back by its supervisor');
      // Not by the killed process's replacement, which would have claimed them as it started.
      const runBy = [...new Set(rows.map((r) => r.worker_id))];
      const started = (await db.pool.query(`SELECT worker_id, started_at FROM workers WHERE $1 = ANY(queues) ORDER BY started_at`, [prefix])).rows;
      assert.deepEqual(runBy, [peer.worker_id], `run by the peer, woken by their ring (workers: ${JSON.stringify(started)})`);
    } finally {
      // A stopped process is not woken by its supervisor's SIGTERM: killed here if a failure left it stopped.
      try {
        if (holderPid !== null) process.kill(holderPid, 'SIGKILL');
      } catch {
        // Gone already, as it should be.
      }
      await Promise.all([first.stop(), second?.stop()]);
      await doorbell.close();
      await pool.end();
    }
  });

  test('a held job that started is charged like any other: its start was on file before it ran', async () => {
    const prefix = uniquePrefix('heldstart');
    // The first holds the slot for a moment; the poison, held behind it, starts next and kills the process.
    await ops.jobEnqueue(db.pool, [{ type: 'demo.sleep', queue: prefix, payload: { ms: 300 } }]);
    const [poison] = await ops.jobEnqueue(db.pool, [{ type: 'demo.sleep', queue: prefix, payload: { ms: 0, crash: true }, maxAttempts: 1 }]);
    const w = start(prefix, 5);
    try {
      await waitFor('the poison to reach the dead letter', async () => (await jobRow(db.pool, poison!.id)).status === 'failed', { timeoutMs: 90_000 });
      const p = await jobRow(db.pool, poison!.id);
      assert.deepEqual([p.attempt_count, p.max_attempts], [1, 1], 'not given back: it may have run');
      assert.deepEqual((await attempts([poison!.id])).map((a) => a.outcome), ['lease_lost']);
    } finally {
      await w.stop();
    }
  });
});

describe('poison jobs that never yield', () => {
  test('a handler spinning its event loop for good: the supervisor kills and replaces its process, the job ends failed after exactly maxAttempts claims, the others complete', async () => {
    const prefix = uniquePrefix('spin');
    const queue = prefix;
    const pool = createPool(db.url, { max: 2 });
    const doorbell = new RedisDoorbell(REDIS_URL, prefix, pool, quiet);
    const w = startWorkers({
      databaseUrl: db.url,
      redisUrl: REDIS_URL,
      prefix,
      processes: 2,
      concurrency: 2,
      queues: queue,
      extra: { LEASEHOLD_HANDLERS: path.join(root, 'test/handlers/spin.ts') },
    });
    try {
      await waitFor('the spin type to be registered', async () => (await db.pool.query(`SELECT 1 FROM job_types WHERE name = 'test.spin'`)).rows.length === 1);
      const [poison] = await ops.jobEnqueue(pool, [{ type: 'test.spin', queue, payload: {}, maxAttempts: 3 }], { doorbell });
      const others = await ops.jobEnqueue(pool, Array.from({ length: 20 }, () => ({ type: 'demo.sleep', queue, payload: { ms: 50 } })), { doorbell });
      await waitFor('the spinning job to reach the dead letter', async () => (await jobRow(db.pool, poison!.id)).status === 'failed', { timeoutMs: 90_000 });
      await waitFor('every other job to complete', async () => (await completedIn(queue)) === others.length, { timeoutMs: 90_000 });
      assert.equal((await jobRow(db.pool, poison!.id)).attempt_count, 3, 'exactly 3 claims');
      // Each hung process was killed and replaced (before the fix they stayed, hung, for ever;
      // with both hung no sweep ran and the job stayed running, its lease expired).
      const killed = async () =>
        (await db.pool.query(`SELECT count(*)::int AS n FROM workers WHERE $1 = ANY(queues) AND exit LIKE '%event loop blocked%'`, [queue])).rows[0].n;
      await waitFor('the three processes the job hung to be killed by the supervisor', async () => (await killed()) === 3, { timeoutMs: 30_000 });
    } finally {
      await w.stop();
      await doorbell.close();
      await pool.end();
    }
  });
});

describe('supervisor', () => {
  test("handlers run in the directory the workers were started from (a relative path is the user's, not the package's)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-cwd-'));
    const prefix = uniquePrefix('cwd');
    fs.writeFileSync(path.join(dir, 'h.mjs'), `import fs from 'node:fs';\nexport const handlers = { 'cwd.write': () => { fs.writeFileSync('./ran.txt', process.cwd()); return 1; } };\n`);
    const w = startWorkers({ databaseUrl: db.url, redisUrl: null, prefix, processes: 1, concurrency: 1, queues: prefix, cwd: dir, extra: { LEASEHOLD_HANDLERS: 'h.mjs' } });
    try {
      await waitFor('the module\'s type to be registered', async () => (await db.pool.query(`SELECT 1 FROM job_types WHERE name = 'cwd.write'`)).rowCount === 1);
      const [job] = await ops.jobEnqueue(db.pool, [{ type: 'cwd.write', queue: prefix }]);
      await waitFor('the job to complete', async () => (await jobRow(db.pool, job!.id)).status === 'completed');
      assert.equal(fs.readFileSync(path.join(dir, 'ran.txt'), 'utf8'), fs.realpathSync(dir));
    } finally {
      await w.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a refusal once a process has come up is not final: the module loaded there, so the one refusing is replaced as usual', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-refuse-late-'));
    const flag = path.join(dir, 'go');
    // Process 1 refuses (an invalid declaration), but only once the test has seen process 0 up.
    fs.writeFileSync(
      path.join(dir, 'm.mjs'),
      `import fs from 'node:fs';
       import { setTimeout as sleep } from 'node:timers/promises';
       const refuse = process.env.LEASEHOLD_WORKER_INDEX === '1';
       while (refuse && !fs.existsSync(${JSON.stringify(flag)})) await sleep(50);
       export const handlers = { t: () => 1 };
       export const jobTypes = refuse ? { t: { maxAttempts: 0 } } : {};\n`,
    );
    const prefix = uniquePrefix('refuselate');
    const w = startWorkers({ databaseUrl: db.url, redisUrl: null, prefix, processes: 2, concurrency: 1, queues: prefix, extra: { LEASEHOLD_HANDLERS: path.join(dir, 'm.mjs') } });
    try {
      await waitFor('process 0 to register', async () => (await db.pool.query(`SELECT 1 FROM workers WHERE $1 = ANY(queues)`, [prefix])).rowCount === 1, { timeoutMs: 60_000 });
      await waitFor('its ready to reach the supervisor', () => /worker process started/.test(w.output()));
      fs.writeFileSync(flag, '');
      await waitFor('process 1 to refuse and be replaced', () => /worker process died; replacing it/.test(w.output()), { timeoutMs: 60_000 });
      assert.equal(w.child.exitCode, null, 'the supervisor runs on');
      assert.doesNotMatch(w.output(), /not replacing it/);
    } finally {
      await w.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a handlers module that cannot be used stops the supervisor with exit 78 and the reason, instead of a restart loop', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-badmodule-'));
    try {
      const cases: [string | null, RegExp][] = [
        // No such file.
        [null, /Cannot find module/],
        [`export const handlers = { t: () => 1 };\nexport const jobTypes = { t: { maxAttempts: 0 } };`, /jobTypes\[\\"t\\"\]\.maxAttempts must be a whole number/], // quoted in the log line
        // A schedule refused by the definition check (the cron parser), after the module loaded.
        [`export const handlers = { t: () => 1 };\nexport const schedules = [{ name: 'bad', cron: '61 * * * *', type: 't' }];`, /schedule \\"bad\\"/],
      ];
      for (const [k, [source, reason]] of cases.entries()) {
        const file = path.join(dir, `m${k}.mjs`);
        if (source !== null) fs.writeFileSync(file, source);
        const prefix = uniquePrefix('badmodule');
        const w = startWorkers({ databaseUrl: db.url, redisUrl: null, prefix, processes: 2, concurrency: 1, queues: prefix, extra: { LEASEHOLD_HANDLERS: file } });
        const exit = await Promise.race([w.exited, new Promise<null>((r) => setTimeout(() => r(null), 120_000))]);
        if (!exit) await w.stop();
        assert.deepEqual(exit, { code: 78, signal: null }, w.output());
        assert.match(w.output(), /the handlers module cannot be used/);
        assert.match(w.output(), reason);
        assert.doesNotMatch(w.output(), /worker process died; replacing it/);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('SIGTSTP to the supervisor quiets every worker process (audited, shown quiet); those in hand finish, nothing new is claimed until Resume', async () => {
    const prefix = uniquePrefix('tstp');
    const w = startWorkers({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix, processes: 2, concurrency: 1, queues: prefix });
    const workers = async () =>
      (await db.pool.query(`SELECT worker_id, quiet_by, heartbeat_at FROM workers WHERE $1 = ANY(queues) AND stopped_at IS NULL ORDER BY worker_id`, [prefix])).rows;
    try {
      await waitFor('both worker processes to register', async () => (await workers()).length === 2);
      const [inHand] = await ops.jobEnqueue(db.pool, [{ type: 'demo.sleep', queue: prefix, payload: { ms: 1_500 } }]);
      await waitFor('a process to run it', async () => (await jobRow(db.pool, inHand!.id)).status === 'running');
      process.kill(w.pid, 'SIGTSTP');
      await waitFor('both to be quieted, by the signal', async () => (await workers()).every((r) => /^SIGTSTP to pid \d+$/.test(r.quiet_by ?? '')));
      const ids = (await workers()).map((r) => r.worker_id);
      await waitFor('both to confirm it', async () => (await listWorkers(db.pool)).filter((x) => ids.includes(x.workerId) && x.quietSeen).length === 2);
      const [waiting] = await ops.jobEnqueue(db.pool, [{ type: 'demo.noop', queue: prefix }]);
      // Chances to claim it: two heartbeats of each process since the enqueue (and their polls).
      await heartbeatsSince('two heartbeats of each process', ids);
      assert.equal((await jobRow(db.pool, waiting!.id)).status, 'queued', 'not claimed while quiet');
      await waitFor('the job in hand to finish', async () => (await jobRow(db.pool, inHand!.id)).status === 'completed');
      const { rows: audit } = await db.pool.query(`SELECT actor_kind, target->>'worker' AS worker FROM audit_log WHERE action = 'worker.quiet' AND target->>'worker' = ANY($1) ORDER BY 2`, [ids]);
      assert.deepEqual(audit, ids.map((id) => ({ actor_kind: 'system', worker: id })));
      // A process started after the signal (a replacement for one that died) is quieted too.
      const { rows: [victim] } = await db.pool.query(`SELECT pid FROM workers WHERE worker_id = $1`, [ids[0]]);
      process.kill(victim.pid, 'SIGKILL');
      await waitFor('its replacement to register and be quieted by the signal', async () =>
        (await workers()).some((r) => !ids.includes(r.worker_id) && /^SIGTSTP to pid \d+$/.test(r.quiet_by ?? '')), { timeoutMs: 30_000 });
      assert.equal((await jobRow(db.pool, waiting!.id)).status, 'queued', 'not claimed by the replacement either');
      const now = (await workers()).map((r) => r.worker_id);
      await ops.workerSetQuiet(db.pool, { workerIds: now, quiet: false, by: 'test' });
      await waitFor('the waiting job to run once resumed', async () => (await jobRow(db.pool, waiting!.id)).status === 'completed');
      // Resumed: the quiet is called off, and a process started from now on claims.
      await waitFor('both to acknowledge the resume', async () => (await listWorkers(db.pool)).filter((x) => now.includes(x.workerId) && x.quietAt === null && !x.quietSeen).length === 2);
      const { rows: [second] } = await db.pool.query(`SELECT pid FROM workers WHERE worker_id = $1`, [now[0]]);
      process.kill(second.pid, 'SIGKILL');
      await waitFor('its replacement to register', async () => (await workers()).some((r) => !now.includes(r.worker_id)), { timeoutMs: 30_000 });
      const fresh = (await workers()).find((r) => !now.includes(r.worker_id))!.worker_id;
      await heartbeatsSince('two heartbeats of the replacement', [fresh]);
      const { rows: [row] } = await db.pool.query(`SELECT quiet_at, quiet_by FROM workers WHERE worker_id = $1`, [fresh]);
      assert.deepEqual(row, { quiet_at: null, quiet_by: null }, 'the replacement started claiming, not quiet');
    } finally {
      await w.stop();
    }
  });

  test('SIGTSTP right after a Resume, before the workers have read it: the new quiet holds, for them and for a replacement', async () => {
    const prefix = uniquePrefix('tstp-again');
    const w = startWorkers({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix, processes: 1, concurrency: 1, queues: prefix });
    const row = async () =>
      (await db.pool.query(`SELECT worker_id, pid, quiet_by FROM workers WHERE $1 = ANY(queues) AND stopped_at IS NULL ORDER BY started_at DESC LIMIT 1`, [prefix])).rows[0];
    const seen = async (id: string) => (await listWorkers(db.pool)).find((x) => x.workerId === id)?.quietSeen === true;
    try {
      await waitFor('the worker process to register', async () => !!(await row()));
      const first = await row();
      process.kill(w.pid, 'SIGTSTP');
      await waitFor('the quiet to be acknowledged', () => seen(first.worker_id));
      // Resume, and at once (within a heartbeat) SIGTSTP again, as a deploy script retried.
      await ops.workerSetQuiet(db.pool, { workerIds: [first.worker_id], quiet: false, by: 'test' });
      process.kill(w.pid, 'SIGTSTP');
      await waitFor('the second quiet to be written', async () =>
        (await db.pool.query(`SELECT count(*)::int AS n FROM audit_log WHERE action = 'worker.quiet' AND target->>'worker' = $1`, [first.worker_id])).rows[0].n === 2);
      await heartbeatsSince('two heartbeats since', [first.worker_id]);
      assert.match((await row()).quiet_by ?? '', /^SIGTSTP to pid \d+$/, 'quiet, by the second signal');
      assert.ok(await seen(first.worker_id), 'and acknowledged');
      const [waiting] = await ops.jobEnqueue(db.pool, [{ type: 'demo.noop', queue: prefix }]);
      process.kill(first.pid, 'SIGKILL');
      await waitFor('its replacement to register quiet', async () => {
        const r = await row();
        return r.worker_id !== first.worker_id && /^SIGTSTP to pid \d+$/.test(r.quiet_by ?? '');
      }, { timeoutMs: 30_000 });
      assert.equal((await jobRow(db.pool, waiting!.id)).status, 'queued', 'not claimed: the supervisor is still quiet');
    } finally {
      await w.stop();
    }
  });

  test('SIGTSTP while the worker processes start: they claim nothing from their start, and record the quiet once registered', async () => {
    const prefix = uniquePrefix('tstp-start');
    const [waiting] = await ops.jobEnqueue(db.pool, [{ type: 'demo.noop', queue: prefix }]);
    const w = startWorkers({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix, processes: 2, concurrency: 1, queues: prefix });
    try {
      // Its handler is in place once it says the workers are started; they are still loading.
      await waitFor('the supervisor to start its processes', () => w.output().includes('workers started'));
      process.kill(w.pid, 'SIGTSTP');
      const quieted = async () =>
        (await db.pool.query(`SELECT worker_id FROM workers WHERE $1 = ANY(queues) AND stopped_at IS NULL AND quiet_by ~ '^SIGTSTP to pid [0-9]+$'`, [prefix])).rows.map((r) => r.worker_id as string);
      await waitFor('both to register quiet, by the signal', async () => (await quieted()).length === 2);
      await heartbeatsSince('two heartbeats of each and a poll', await quieted());
      assert.equal((await jobRow(db.pool, waiting!.id)).status, 'queued', 'not claimed: quiet from the start');
    } finally {
      await w.stop();
    }
  });

  test('a supervisor stopped past its stall limit (Ctrl-Z, a frozen cgroup) kills none of its healthy processes when it runs again', async () => {
    const prefix = uniquePrefix('super-stopped');
    // Lease 2 s: the stall limit is its floor, 10 s.
    const w = startWorkers({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix, processes: 1, concurrency: 1, queues: prefix });
    const rows = async () =>
      (await db.pool.query(`SELECT worker_id, exit FROM workers WHERE $1 = ANY(queues)`, [prefix])).rows;
    try {
      await waitFor('the worker process to register', async () => (await rows()).length === 1);
      const [before] = await rows();
      process.kill(w.pid, 'SIGSTOP');
      const stoppedAt = Date.now();
      try {
        // The fault lasts past the 10 s limit; the worker process runs on meanwhile, its beats piling up unread.
        await waitFor('12 s with the supervisor stopped', () => Date.now() - stoppedAt > 12_000, { timeoutMs: 30_000 });
      } finally {
        process.kill(w.pid, 'SIGCONT');
      }
      const resumed = (await db.pool.query(`SELECT now() + interval '2 s' AS t`)).rows[0].t as Date;
      // Killed at its supervisor's first tick, the process would report no more.
      await waitFor('the same process to report after the supervisor resumed', async () =>
        (await db.pool.query(`SELECT 1 FROM workers WHERE worker_id = $1 AND heartbeat_at > $2 AND stopped_at IS NULL`, [before.worker_id, resumed])).rows.length === 1,
      { timeoutMs: 20_000 });
      const after = await rows();
      assert.deepEqual(after.map((r) => [r.worker_id, r.exit]), [[before.worker_id, null]]);
    } finally {
      await w.stop();
    }
  });

  test('a worker process killed with SIGKILL is replaced at once, and its row says it died (the console no longer counts it alive)', async () => {
    const prefix = uniquePrefix('super');
    const w = startWorkers({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix, processes: 2, concurrency: 2, queues: prefix });
    try {
      const alive = async () =>
        (await db.pool.query(`SELECT pid FROM workers WHERE $1 = ANY(queues) AND stopped_at IS NULL AND heartbeat_at > now() - interval '2 s'`, [prefix])).rows.map((r) => r.pid as number);
      const pids = await waitFor('two worker processes', async () => ((await alive()).length === 2 ? await alive() : false));
      process.kill(pids[0]!, 'SIGKILL');
      const { rows } = await waitFor('a replacement to register', async () => {
        const r = await db.pool.query(`SELECT pid FROM workers WHERE $1 = ANY(queues)`, [prefix]);
        return r.rows.length === 3 && r;
      });
      assert.equal(new Set(rows.map((r) => r.pid)).size, 3);
      const dead = await waitFor('the dead process to be recorded', async () => {
        const r = await db.pool.query(`SELECT stopped_at IS NOT NULL AS stopped, exit FROM workers WHERE pid = $1 AND $2 = ANY(queues)`, [pids[0], prefix]);
        return r.rows[0]?.stopped && r.rows[0];
      });
      assert.equal(dead.exit, 'killed by SIGKILL');
      const { rows: survivors } = await db.pool.query(`SELECT exit FROM workers WHERE pid <> $1 AND $2 = ANY(queues)`, [pids[0], prefix]);
      assert.deepEqual(survivors.map((r) => r.exit), [null, null], 'the others are not marked');
    } finally {
      const exit = await w.stop();
      assert.equal(exit.code, 0, 'the supervisor stops cleanly on SIGTERM');
    }
  });

  test("a worker process killed with SIGKILL: its jobs' leases end at once, and they run again long before the lease would have run out", async () => {
    const prefix = uniquePrefix('super-lease');
    const queue = prefix;
    const pool = createPool(db.url, { max: 2 });
    const doorbell = new RedisDoorbell(REDIS_URL, prefix, pool, quiet);
    // A ten-minute lease: without the early end, the jobs would wait ten minutes for the sweep.
    const w = startWorkers({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix, processes: 2, concurrency: 2, queues: queue, leaseMs: 600_000 });
    try {
      const jobs = await ops.jobEnqueue(pool, Array.from({ length: 2 }, () => ({ type: 'demo.sleep', queue, payload: { ms: 600_000 } })), { doorbell });
      const ids = jobs.map((j) => j.id);
      const running = async () =>
        (await db.pool.query(`SELECT j.job_id, j.worker_id, w.pid FROM jobs j JOIN workers w USING (worker_id)
                               WHERE j.job_id = ANY($1::bigint[]) AND j.status = 'running'`, [ids])).rows;
      const held = await waitFor('both jobs to run', async () => ((await running()).length === 2 ? await running() : false), { timeoutMs: 30_000 });
      const victim = held[0]!;
      const itsJobs = held.filter((r) => r.worker_id === victim.worker_id).map((r) => String(r.job_id));
      const others = held.filter((r) => r.worker_id !== victim.worker_id);
      process.kill(victim.pid, 'SIGKILL');
      // Each of the victim's jobs runs again, in attempt 2, its first attempt recorded as lost to the kill.
      await waitFor('the dead process\'s jobs to be claimed again', async () => {
        const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1::bigint[]) AND status = 'running' AND attempt_count = 2`, [itsJobs]);
        return rows[0].n === itsJobs.length;
      }, { timeoutMs: 60_000 });
      const { rows: lost } = await db.pool.query(
        `SELECT job_id, attempt, worker_id, outcome, error FROM ended_attempts WHERE job_id = ANY($1::bigint[]) ORDER BY job_id, attempt`, [ids]);
      assert.deepEqual(
        lost.map((r) => [String(r.job_id), r.attempt, r.worker_id, r.outcome]),
        itsJobs.sort((a, b) => Number(a) - Number(b)).map((id) => [id, 1, victim.worker_id, 'lease_lost']),
      );
      // Moved on by the sweep ("worker … stopped renewing") or taken over by a peer's claim
      // ("the worker stopped renewing …; taken over"), whichever came first.
      for (const r of lost) assert.match(r.error, /stopped renewing \(killed by SIGKILL\)/);
      // The survivor's jobs are untouched: same worker, first attempt, a lease still minutes away.
      for (const o of others) {
        const j = await jobRow(db.pool, String(o.job_id));
        assert.equal(j.worker_id, o.worker_id);
        assert.equal(j.attempt_count, 1);
        const { rows: [left] } = await db.pool.query(`SELECT lease_expires_at > now() + interval '5 minutes' AS far FROM jobs WHERE job_id = $1`, [o.job_id]);
        assert.equal(left.far, true);
      }
    } finally {
      await w.stop();
      await doorbell.close();
      await pool.end();
    }
  });

  test('a worker process killed at the stop deadline (it did not stop in time): its row says so and its leases end, for whoever runs next', async () => {
    const prefix = uniquePrefix('super-stop');
    const queue = prefix;
    const pool = createPool(db.url, { max: 2 });
    const doorbell = new RedisDoorbell(REDIS_URL, prefix, pool, quiet);
    // A job that never yields: its process cannot even hear SIGTERM, so the supervisor kills it
    // at its stop deadline (grace 2 s + 10 s). A ten-minute lease: left alone, it would wait ten minutes.
    const w = startWorkers({
      databaseUrl: db.url,
      redisUrl: REDIS_URL,
      prefix,
      processes: 1,
      concurrency: 1,
      queues: queue,
      leaseMs: 600_000,
      extra: { LEASEHOLD_HANDLERS: path.join(root, 'test/handlers/spin.ts') },
    });
    let id: string | undefined;
    let spinDir: string | undefined;
    try {
      await waitFor('the spin type to be registered', async () => (await db.pool.query(`SELECT 1 FROM job_types WHERE name = 'test.spin'`)).rows.length === 1);
      // Stopped once the handler spins, not once the job is running in the database: a SIGTERM
      // between the claim and the start would find a process that can still stop.
      spinDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-spin-'));
      const started = path.join(spinDir, 'started');
      id = (await ops.jobEnqueue(pool, [{ type: 'test.spin', queue, payload: { started } }], { doorbell }))[0]!.id;
      await waitFor('the handler to spin', async () => fs.existsSync(started), { timeoutMs: 30_000 });
      const held = await jobRow(db.pool, id);
      const exit = await w.stop();
      assert.equal(exit.code, 0, 'the supervisor stops on SIGTERM, killing what did not stop');
      const { rows: [row] } = await db.pool.query(`SELECT stopped_at IS NOT NULL AS stopped, exit FROM workers WHERE worker_id = $1`, [held.worker_id]);
      assert.deepEqual(row, { stopped: true, exit: 'killed by the supervisor: not stopped 12 s after SIGTERM' });
      const { rows: [lease] } = await db.pool.query(`SELECT status, lease_expires_at <= now() AS ended FROM jobs WHERE job_id = $1`, [id]);
      assert.deepEqual(lease, { status: 'running', ended: true });
    } finally {
      await w.stop();
      if (id) await db.pool.query(`DELETE FROM jobs WHERE job_id = $1`, [id]);
      if (spinDir) fs.rmSync(spinDir, { recursive: true, force: true });
      await doorbell.close();
      await pool.end();
    }
  });
});

describe('stopping with jobs in flight (a deploy)', () => {
  // SIGTERM is what every deploy sends; the supervisor dying alone (the OOM killer's pick, a
  // kill -9 of the main pid) leaves its processes to notice the closed channel. Either way the
  // processes drain: jobs that end within the grace period complete, the others are handed
  // back at once (queued, their attempt given back) and run elsewhere, and no job is left
  // running under a process that has gone. A ten-minute lease: a job left to its lease would
  // wait ten minutes, far past these waits.
  for (const how of ['SIGTERM to the supervisor', 'the supervisor killed with SIGKILL'] as const) {
    test(`${how}: jobs that finish within the grace complete; the rest are handed back and run on another host at once; none is left running`, async () => {
      const rig = faultRig('drain', { LEASEHOLD_SHUTDOWN_GRACE_MS: '5000' });
      const shortGate = path.join(rig.dir, 'short');
      const longGate = path.join(rig.dir, 'long');
      const a = startWorkers({ ...rig.host, processes: 2, concurrency: 3 });
      let b: Proc | undefined;
      const pidsOfA: number[] = [];
      try {
        await rig.registered();
        const jobs = await rig.enqueue([0, 1, 2].map((k) => rig.waitJob(shortGate, k)).concat([3, 4, 5].map((k) => rig.waitJob(longGate, k))));
        const short = jobs.slice(0, 3).map((j) => j.id);
        const long = jobs.slice(3).map((j) => j.id);
        const all = [...short, ...long];
        const started = () => (fs.existsSync(rig.ledger) ? fs.readFileSync(rig.ledger, 'utf8').split('\n').filter((l) => l.startsWith('start ')).length : 0);
        await waitFor('host A to run all six jobs', () => started() === 6, { timeoutMs: 30_000 });
        const workersOfA = await rig.workers();
        assert.equal(workersOfA.length, 2);
        pidsOfA.push(...workersOfA.map((r) => r.pid as number));
        const idsOfA = workersOfA.map((r) => r.worker_id as string);

        // Host B is up, and idle: A holds every job.
        b = startWorkers({ ...rig.host, processes: 1, concurrency: 6 });
        await waitFor('host B to register', async () => (await rig.workers()).length === 3);

        process.kill(a.pid, how === 'SIGTERM to the supervisor' ? 'SIGTERM' : 'SIGKILL');
        fs.writeFileSync(shortGate, ''); // the short jobs end inside the grace period
        if (how === 'SIGTERM to the supervisor') assert.deepEqual(await a.exited, { code: 0, signal: null }, 'the supervisor stops cleanly');
        await waitFor("host A's worker processes to exit", () => pidsOfA.every((pid) => !alive(pid)), { timeoutMs: 60_000 });

        // Nothing runs under a process that has gone, the moment it has gone.
        const { rows: [held] } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE status = 'running' AND worker_id = ANY($1)`, [idsOfA]);
        assert.equal(held.n, 0, `no job is left running under host A's worker ids; host A said:\n${a.output()}`);
        const { rows: stopped } = await db.pool.query(`SELECT stopped_at IS NOT NULL AS stopped, exit FROM workers WHERE worker_id = ANY($1)`, [idsOfA]);
        assert.deepEqual(stopped, [{ stopped: true, exit: null }, { stopped: true, exit: null }], 'each process stopped cleanly');
        for (const id of short) {
          const j = await jobRow(db.pool, id);
          assert.deepEqual([j.status, j.attempt_count], ['completed', 1], `short job ${id} completed by host A in its first attempt`);
          assert.ok(idsOfA.includes(j.worker_id));
        }
        const { rows: handedBack } = await db.pool.query(
          `SELECT job_id::text AS id, attempt, worker_id, outcome, error FROM job_attempts WHERE job_id = ANY($1::bigint[]) AND attempt = 1 ORDER BY job_id`,
          [long],
        );
        assert.deepEqual(
          handedBack.map((r) => [r.id, r.outcome, r.error, idsOfA.includes(r.worker_id)]),
          long.map((id) => [id, 'aborted', 'worker shut down before the job finished; lease handed back', true]),
        );

        // They run on host B now, not a lease from now, and complete once.
        fs.writeFileSync(longGate, '');
        await waitFor('every job to complete', async () =>
          (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1::bigint[]) AND status = 'completed'`, [all])).rows[0].n === 6,
        { timeoutMs: 60_000 });
        for (const id of long) {
          const j = await jobRow(db.pool, id);
          assert.equal(j.attempt_count, 2);
          assert.equal(j.max_attempts, 4, 'the interrupted attempt was given back');
          assert.ok(!idsOfA.includes(j.worker_id), 'completed by host B');
        }
        const { rows: outcomes } = await db.pool.query(
          `SELECT outcome::text, count(*)::int AS n FROM job_attempts WHERE job_id = ANY($1::bigint[]) GROUP BY 1 ORDER BY 1`,
          [all],
        );
        assert.deepEqual(outcomes, [{ outcome: 'aborted', n: 3 }, { outcome: 'completed', n: 6 }], 'no lease lost, one completion each');
      } finally {
        await a.stop();
        for (const pid of pidsOfA) if (alive(pid)) process.kill(pid, 'SIGKILL');
        await b?.stop();
        await rig.close();
      }
    });
  }

  // A process beats to its supervisor every 500 ms. After a SIGKILL of the supervisor the
  // channel is gone before the process has read its end-of-file: a beat sent then (a handler
  // held the event loop, and the overdue beat timer runs before the read) fails with EPIPE,
  // which, unhandled, ended the process at once — its jobs left running under its id until
  // their leases ran out, instead of drained and handed back.
  test('a worker process busy when its supervisor is killed with SIGKILL still drains: its beat to the dead supervisor does not end it', async () => {
    const rig = faultRig('orphan-beat', { LEASEHOLD_SHUTDOWN_GRACE_MS: '2000' });
    // With a prefetch, so the process keeps a held-ledger file for its supervisor.
    const host = startWorkers({ ...rig.host, processes: 1, concurrency: 2, prefetch: 1 });
    const ledgers = () => fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith(`leasehold-held-${host.pid}-`));
    let pid: number | undefined;
    try {
      await rig.registered();
      const started = (id: string) => fs.existsSync(rig.ledger) && fs.readFileSync(rig.ledger, 'utf8').includes(`start ${id} `);
      const [waiting] = await rig.enqueue([rig.waitJob(path.join(rig.dir, 'never'))]);
      await waitFor('the waiting job to start', async () => (await jobRow(db.pool, waiting!.id)).status === 'running');
      assert.equal(ledgers().length, 1, 'its held-ledger file');
      const [worker] = await rig.workers();
      pid = worker.pid as number;
      // Four seconds of a blocked event loop: the supervisor is killed inside them.
      const [blocking] = await rig.enqueue([{ type: 'test.block', payload: { ledger: rig.ledger, ms: 4_000 } }]);
      await waitFor('the blocking job to start', () => started(blocking!.id), { intervalMs: 10 });
      assert.ok(!fs.readFileSync(rig.ledger, 'utf8').includes(`end ${blocking!.id} `), 'the kill lands while the loop is blocked');
      process.kill(host.pid, 'SIGKILL');
      await waitFor('the worker process to exit', () => !alive(pid!), { timeoutMs: 60_000 });

      const [w] = await rig.workers();
      assert.deepEqual([w.stopped, w.exit], [true, null], `the process stopped cleanly; it said:\n${host.output()}`);
      assert.equal((await jobRow(db.pool, blocking!.id)).status, 'completed', 'the blocked job ended within the grace');
      assert.equal((await jobRow(db.pool, waiting!.id)).status, 'queued', 'the waiting job was handed back, not left running');
      const { rows: attempts } = await db.pool.query(`SELECT attempt, outcome FROM job_attempts WHERE job_id = $1`, [waiting!.id]);
      assert.deepEqual(attempts, [{ attempt: 1, outcome: 'aborted' }]);
      assert.deepEqual(ledgers(), [], 'no supervisor is left to read its held-ledger file: the process removed it');
    } finally {
      await host.stop();
      if (pid !== undefined && alive(pid)) process.kill(pid, 'SIGKILL');
      await rig.close();
    }
  });
});

describe('a hangup', () => {
  // A terminal that closes (an SSH session that drops) hangs up the foreground job: every
  // process of it gets SIGHUP — the supervisor and its processes alike (forked into its
  // process group). Node's default for SIGHUP ends the process at once (even under nohup:
  // Node resets the signal to its default), so nothing drained: the jobs were left running
  // until their leases ran out, and no supervisor was left to tell of the deaths.
  test('SIGHUP to the supervisor and its processes drains them as SIGTERM does', async () => {
    const rig = faultRig('hangup');
    const host = startWorkers({ ...rig.host, processes: 2, concurrency: 2 });
    let pids: number[] = [];
    try {
      await rig.registered();
      pids = await waitFor('both processes to register', async () => {
        const rows = await rig.workers();
        return rows.length === 2 && rows.map((r) => r.pid as number);
      });
      const [waiting] = await rig.enqueue([rig.waitJob(path.join(rig.dir, 'never'))]);
      await waitFor('the waiting job to start', async () => (await jobRow(db.pool, waiting!.id)).status === 'running');

      for (const pid of [host.pid, ...pids]) process.kill(pid, 'SIGHUP');
      assert.deepEqual(await host.exited, { code: 0, signal: null }, `the supervisor stops cleanly; it said:\n${host.output()}`);
      assert.deepEqual((await rig.workers()).map((w) => [w.stopped, w.exit]), [[true, null], [true, null]], `each process stopped cleanly; they said:\n${host.output()}`);
      assert.equal((await jobRow(db.pool, waiting!.id)).status, 'queued', 'the waiting job was handed back');
    } finally {
      await host.stop();
      for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
      await rig.close();
    }
  });
});

describe('a stop while a process starts', () => {
  // A deploy's SIGTERM can reach a process between its registration and the end of its start.
  // Node's default ended it there, and its supervisor recorded "killed by SIGTERM" for a
  // process stopped as asked (the workers page said it died).
  test('SIGTERM to the supervisor while its process is still starting: the process finishes starting, then stops cleanly, and its row says so', async () => {
    // Held 6 s inside its start once registered: within the supervisor's stop deadline (12 s here).
    const rig = faultRig('stopstart', { LEASEHOLD_FAILPOINTS: 'after_register=stall:6000*1', LEASEHOLD_LOG: 'info' });
    const host = startWorkers({ ...rig.host, processes: 1, concurrency: 1 });
    try {
      await waitFor('the process to register', async () => (await rig.workers()).length === 1);
      process.kill(host.pid, 'SIGTERM');
      assert.deepEqual(await host.exited, { code: 0, signal: null }, `the supervisor stops cleanly; it said:\n${host.output()}`);
      assert.deepEqual((await rig.workers()).map((w) => [w.stopped, w.exit]), [[true, null]], `the process stopped by itself; it said:\n${host.output()}`);
      // The stop came while it started (else the test proved nothing): asked before it said it had started.
      const out = host.output();
      assert.ok(out.indexOf('stopping: no new claims') >= 0 && out.indexOf('stopping: no new claims') < out.indexOf('worker process started'), `stopped during its start; it said:\n${out}`);
    } finally {
      await host.stop();
      await rig.close();
    }
  });
});

describe('output', () => {
  // `npm run worker 2>&1 | some-log-shipper`, and the shipper ends: every later log line is a
  // write to a closed pipe. Node raises its EPIPE as an 'error' on the stream, which, with no
  // listener, ended the supervisor and its processes at their next line — the stop itself
  // logs one — leaving their jobs running until the leases ran out. The lines are lost; the
  // work, and the drain, go on.
  test('a supervisor and its processes whose output pipe closes keep working, and still drain cleanly on SIGTERM', async () => {
    const rig = faultRig('no-output', { LEASEHOLD_LOG: 'debug' });
    const host = startWorkers({ ...rig.host, processes: 2, concurrency: 2 });
    try {
      await rig.registered();
      await waitFor('both processes to register', async () => (await rig.workers()).length === 2);
      // The reader goes away: the pipe's only read end is ours.
      host.child.stdout!.destroy();
      host.child.stderr!.destroy();
      const [waiting] = await rig.enqueue([rig.waitJob(path.join(rig.dir, 'never'))]);
      const quick = await rig.enqueue(Array.from({ length: 20 }, () => ({ type: 'demo.noop', payload: {} })));
      await waitFor('the quick jobs to complete', async () =>
        (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1::bigint[]) AND status = 'completed'`, [quick.map((j) => j.id)])).rows[0].n === 20);
      await waitFor('the waiting job to start', async () => (await jobRow(db.pool, waiting!.id)).status === 'running');

      process.kill(host.pid, 'SIGTERM');
      assert.deepEqual(await host.exited, { code: 0, signal: null }, 'the supervisor stops cleanly');
      assert.deepEqual((await rig.workers()).map((w) => [w.stopped, w.exit]), [[true, null], [true, null]], 'each process stopped cleanly');
      assert.equal((await jobRow(db.pool, waiting!.id)).status, 'queued', 'the waiting job was handed back');
    } finally {
      await host.stop();
      await rig.close();
    }
  });

  test("the console's process (behind its preload) outlives a closed output pipe too", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-no-output-'));
    const lines = path.join(dir, 'lines');
    // Logs a line to each stream every 20 ms, then counts it in a file: the count goes on
    // growing only while the process lives through its writes to the closed pipe.
    const script = `let n = 0; setInterval(() => { console.log('out'); console.error('err'); require('fs').appendFileSync(${JSON.stringify(lines)}, (n++) + '\\n'); }, 20);`;
    const web = spawn(process.execPath, ['--import', path.join(root, 'worker/http-guard.mjs'), '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const count = () => (fs.existsSync(lines) ? fs.readFileSync(lines, 'utf8').split('\n').length - 1 : 0);
    try {
      await waitFor('the first lines', () => count() > 0);
      web.stdout!.destroy();
      web.stderr!.destroy();
      const after = count();
      await waitFor('fifty more lines written after the pipe closed', () => count() > after + 50 || web.exitCode !== null);
      assert.equal(web.exitCode, null, 'still running');
    } finally {
      web.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  // `npm run worker >> worker.log 2>&1`, and the disk fills or the file reaches its size
  // limit: each later line fails (ENOSPC, EFBIG; a terminal that hung up: EIO). Only EPIPE was
  // dropped at first, and any other such error ended the process at its next line, as above.
  // Here the file reaches the supervisor's RLIMIT_FSIZE (prlimit), which needs no full disk.
  test('a supervisor and its processes whose log file cannot grow keep working, and still drain cleanly on SIGTERM', async () => {
    const rig = faultRig('log-full');
    const logFile = path.join(rig.dir, 'worker.log');
    const limit = 16 * 1024 * 1024;
    const out = fs.openSync(logFile, 'a');
    const args = ['--processes', '2', '--concurrency', '2', '--queues', rig.queue];
    const child = spawn('prlimit', [`--fsize=${limit}`, process.execPath, '--import', tsx, path.join(root, 'worker/bin/worker.ts'), ...args], {
      cwd: root,
      env: { ...process.env, LEASEHOLD_LOG: 'info', ...workerEnv(rig.host) },
      stdio: ['ignore', out, out],
    });
    fs.closeSync(out);
    // prlimit missing (util-linux) fails the test with its ENOENT, not the whole file.
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r, reject) => {
      child.once('exit', (code, signal) => r({ code, signal }));
      child.once('error', reject);
    });
    try {
      await rig.registered();
      await waitFor('both processes to register', async () => (await rig.workers()).length === 2);
      const [waiting] = await rig.enqueue([rig.waitJob(path.join(rig.dir, 'never'))]);
      await waitFor('the waiting job to start', async () => (await jobRow(db.pool, waiting!.id)).status === 'running');
      const before = fs.readFileSync(logFile, 'utf8');
      fs.truncateSync(logFile, limit); // as large as it may grow: every later line fails with EFBIG
      const quick = await rig.enqueue(Array.from({ length: 20 }, () => ({ type: 'demo.noop', payload: {} })));
      await waitFor('the quick jobs to complete', async () =>
        (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1::bigint[]) AND status = 'completed'`, [quick.map((j) => j.id)])).rows[0].n === 20);

      child.kill('SIGTERM');
      assert.deepEqual(await exited, { code: 0, signal: null }, `the supervisor stops cleanly; it said before its log stopped growing:\n${before}`);
      assert.deepEqual((await rig.workers()).map((w) => [w.stopped, w.exit]), [[true, null], [true, null]], 'each process stopped cleanly');
      assert.equal((await jobRow(db.pool, waiting!.id)).status, 'queued', 'the waiting job was handed back');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited.catch(() => {});
      // Its processes, should the supervisor have died without stopping them.
      for (const w of await rig.workers()) if (!w.stopped && alive(w.pid)) process.kill(w.pid, 'SIGKILL');
      await rig.close();
    }
  });
});

describe('worker priority', () => {
  /** The nice value of each of a process's threads (Linux: a nice value is per thread). */
  const threadNices = (pid: number) => fs.readdirSync(`/proc/${pid}/task`).map((tid) => os.getPriority(Number(tid)));

  /**
   * A supervisor with `processes` workers under LEASEHOLD_WORKER_NICE=`setting` (undefined:
   * unset), itself started `startNice` above this test's nice value; `check` gets the
   * supervisor and its workers' pids once they have registered, and everything is stopped.
   */
  async function withWorkers(
    o: { setting: string | undefined; processes?: number; startNice?: number },
    check: (w: Proc, pids: number[]) => void,
  ) {
    const prefix = uniquePrefix('nice');
    const processes = o.processes ?? 1;
    const w = startWorkers({
      databaseUrl: db.url, redisUrl: REDIS_URL, prefix, processes, concurrency: 1, queues: prefix,
      nice: o.startNice, extra: { LEASEHOLD_WORKER_NICE: o.setting },
    });
    try {
      const pids = await waitFor(`${processes} worker processes to register`, async () => {
        const { rows } = await db.pool.query(`SELECT pid FROM workers WHERE $1 = ANY(queues) AND stopped_at IS NULL`, [prefix]);
        return rows.length === processes && rows.map((r) => r.pid as number);
      });
      check(w, pids);
    } finally {
      await w.stop();
    }
  }

  test('by default worker processes keep their priority', async () => {
    await withWorkers({ setting: undefined }, (_w, [pid]) => {
      assert.deepEqual(new Set(threadNices(pid!)), new Set([os.getPriority()]));
    });
    // Off means off: a supervisor started above the default priority (nice -5, where this
    // test may raise one) keeps its workers there too, not at 0.
    await withWorkers({ setting: '0', startNice: -5 }, (w, [pid]) => {
      assert.deepEqual(new Set(threadNices(pid!)), new Set([os.getPriority(w.pid)]));
    });
  });

  test('with LEASEHOLD_WORKER_NICE=10 every thread of each worker process is lowered, below the console', async () => {
    await withWorkers({ setting: '10', processes: 2 }, (w, pids) => {
      // Never above the priority this test runs at (a suite started under nice stays there).
      const expected = Math.max(10, os.getPriority());
      for (const pid of pids) {
        const nices = threadNices(pid);
        assert.ok(nices.length > 1, 'a Node process has helper threads');
        assert.deepEqual(new Set(nices), new Set([expected]), `every thread of worker ${pid}, V8's helpers included`);
      }
      assert.equal(os.getPriority(w.pid), os.getPriority(), 'the supervisor itself is left alone');
    });
  });

  test('LEASEHOLD_WORKER_NICE sets it, and a process started lower is never raised', async () => {
    await withWorkers({ setting: '15' }, (_w, [pid]) => {
      assert.deepEqual(new Set(threadNices(pid!)), new Set([Math.max(15, os.getPriority())]));
    });
    const started = Math.max(12, os.getPriority());
    await withWorkers({ setting: '7', startNice: Math.max(0, 12 - os.getPriority()) }, (kept, [pid]) => {
      assert.equal(os.getPriority(kept.pid), started, 'the supervisor was started at nice 12');
      assert.deepEqual(new Set(threadNices(pid!)), new Set([started]), 'not raised to 7');
      // Without the right to raise it, a try would fail and be logged: not even tried.
      assert.doesNotMatch(kept.output(), /could not lower/);
    });
  });
});

describe('Redis going away', () => {
  async function setup(what: string) {
    const redis = await ownRedis();
    const prefix = uniquePrefix(what);
    const pool = createPool(db.url, { max: 3 });
    const doorbell = new RedisDoorbell(redis.url, prefix, pool, quiet);
    await waitFor('the doorbell to connect', () => doorbell.usingRedis);
    const enqueue = (n: number) =>
      ops.jobEnqueue(pool, Array.from({ length: n }, () => ({ type: 'demo.sleep', queue: prefix, payload: { ms: 20 } })), { doorbell });
    return { redis, prefix, pool, doorbell, enqueue };
  }

  test('Redis flushed mid-run: every job still completes', async () => {
    const { redis, prefix, pool, doorbell, enqueue } = await setup('flush');
    await enqueue(400);
    const w = startWorkers({ databaseUrl: db.url, redisUrl: redis.url, prefix, processes: 2, concurrency: 4, queues: prefix });
    try {
      await waitFor('some jobs to complete', async () => (await completedIn(prefix)) >= 40);
      await redis.client().flushall();
      await waitFor('all 400 jobs to complete', async () => (await completedIn(prefix)) === 400, { timeoutMs: 120_000 });
    } finally {
      await w.stop();
      await doorbell.close();
      await pool.end();
    }
  });

  test('Redis stopped mid-run: work continues from PostgreSQL, new jobs too, and the Redis signal is used again when it returns', async () => {
    const { redis, prefix, pool, doorbell, enqueue } = await setup('down');
    await enqueue(300);
    const w = startWorkers({ databaseUrl: db.url, redisUrl: redis.url, prefix, processes: 2, concurrency: 4, queues: prefix });
    try {
      await waitFor('some jobs to complete', async () => (await completedIn(prefix)) >= 30);
      await redis.kill();
      await enqueue(100); // accepted while Redis is down: the doorbell falls back to NOTIFY
      await waitFor('all 400 jobs to complete without Redis', async () => (await completedIn(prefix)) === 400, { timeoutMs: 120_000 });
      assert.match(w.output(), /claiming from PostgreSQL \(poll \+ LISTEN\) while Redis is unreachable/);
      await redis.start();
      await waitFor('the workers to use Redis again', () => /Redis reachable again: claiming on its signal/.test(w.output()), { timeoutMs: 60_000 });
      await waitFor('the doorbell to reconnect', () => doorbell.usingRedis, { timeoutMs: 30_000 });
      await enqueue(50);
      await waitFor('the last 50 to complete', async () => (await completedIn(prefix)) === 450, { timeoutMs: 60_000 });
      const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = $1 AND status <> 'completed'`, [prefix]);
      assert.equal(rows[0].n, 0);
    } finally {
      await w.stop();
      await doorbell.close();
      await pool.end();
    }
  });
});

describe('when whoever started them goes away', () => {
  // A parent like `npm start`: it forks the supervisor (with an IPC channel, as start.ts
  // does) and starts a process with the console's preload, then is killed with SIGKILL.
  const PARENT = `
    const { fork, spawn } = require('node:child_process');
    const supervisor = fork(process.env.T_SUPERVISOR, ['--processes', '2', '--concurrency', '1', '--queues', process.env.T_QUEUE],
      { execArgv: ['--import', process.env.T_TSX], stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
    const web = spawn(process.execPath, ['--import', process.env.T_GUARD, '-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    console.log(JSON.stringify({ supervisor: supervisor.pid, web: web.pid }));
    setInterval(() => {}, 1000);`;

  test('a parent killed with SIGKILL: the supervisor drains its workers and exits, and the console stops', async () => {
    const prefix = uniquePrefix('orphan');
    const parent = spawn(process.execPath, ['-e', PARENT], {
      cwd: root,
      env: {
        ...process.env,
        ...workerEnv({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix }),
        LEASEHOLD_LOG: 'warn',
        T_SUPERVISOR: path.join(root, 'worker/bin/worker.ts'),
        T_GUARD: path.join(root, 'worker/http-guard.mjs'),
        T_TSX: tsx,
        T_QUEUE: prefix,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const children: number[] = [];
    try {
      const first = await new Promise<string>((resolve) => parent.stdout!.once('data', (d: Buffer) => resolve(d.toString())));
      const { supervisor, web } = JSON.parse(first) as { supervisor: number; web: number };
      children.push(supervisor, web);
      const workers = await waitFor('2 worker processes to register', async () => {
        const { rows } = await db.pool.query(`SELECT pid FROM workers WHERE $1 = ANY(queues) AND stopped_at IS NULL`, [prefix]);
        return rows.length === 2 && rows.map((r) => r.pid as number);
      });
      children.push(...workers);
      parent.kill('SIGKILL');
      await waitFor('the supervisor, its workers and the console to exit', () => children.every((pid) => !alive(pid)), { timeoutMs: 60_000 });
      const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM workers WHERE $1 = ANY(queues) AND stopped_at IS NOT NULL AND exit IS NULL`, [prefix]);
      assert.equal(rows[0].n, 2, 'each worker stopped cleanly (its row says so), not killed');
    } finally {
      parent.kill('SIGKILL');
      for (const pid of children) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  test('run from a shell that then exits (`nohup node worker/bin/worker.ts &`): the supervisor and its workers run on', async () => {
    const prefix = uniquePrefix('nohup');
    const env: NodeJS.ProcessEnv = { ...process.env, ...workerEnv({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix }), LEASEHOLD_LOG: 'warn' };
    // Not run by npm (`npm test` may have set these): the shell is the supervisor's parent.
    for (const k of Object.keys(env)) if (k.startsWith('npm_')) delete env[k];
    // The shell waits for a line on its stdin, so that it exits only once the supervisor runs.
    const shell = spawn('sh', ['-c', 'nohup "$0" --import "$1" "$2" --processes 1 --concurrency 2 --queues "$3" >/dev/null 2>&1 & echo $!; read _',
      process.execPath, tsx, path.join(root, 'worker/bin/worker.ts'), prefix], { cwd: root, env, stdio: ['pipe', 'pipe', 'inherit'] });
    const supervisor = Number(await new Promise<string>((resolve) => shell.stdout!.once('data', (d: Buffer) => resolve(d.toString()))));
    const children = [supervisor];
    try {
      // Its worker registers after the supervisor logged "workers started" and began to watch.
      const [worker] = await waitFor('the worker process to register', async () => {
        const { rows } = await db.pool.query(`SELECT worker_id, pid FROM workers WHERE $1 = ANY(queues) AND stopped_at IS NULL`, [prefix]);
        return rows.length === 1 && rows;
      });
      children.push(worker.pid);
      shell.stdin!.end('\n');
      await new Promise((resolve) => shell.once('exit', resolve));
      // The parent watch ticks every 500 ms: it has had its chances by the time this worker
      // has reported twice more. Before, the supervisor stopped its workers here.
      await heartbeatsSince('the worker to report twice more', [worker.worker_id]);
      const job = await insertJob(db.pool, { queue: prefix, payload: { ms: 10 } });
      await waitFor('the job to complete', async () => (await jobRow(db.pool, job)).status === 'completed');
      assert.ok(alive(supervisor), 'the supervisor runs on');
      const { rows } = await db.pool.query(`SELECT stopped_at FROM workers WHERE worker_id = $1`, [worker.worker_id]);
      assert.equal(rows[0].stopped_at, null, 'its worker was not stopped');
    } finally {
      for (const pid of children) if (alive(pid)) process.kill(pid, 'SIGTERM');
      await waitFor('the supervisor and its worker to exit', () => children.every((pid) => !alive(pid)), { timeoutMs: 30_000 });
    }
  });
});

/**
 * npx leasehold <verb> — the command line. Every action calls the same lib/queue
 * functions as the worker, the API and the console.
 *
 * Exit codes: 0 done; 1 the action was refused for some or all jobs (state forbids, not
 * found); 2 bad usage or input; 3 the database or Redis is unreachable.
 */
import { Command, InvalidArgumentError } from 'commander';
import { loadConfig } from '../../lib/config';
import { createPool } from '../../lib/db/client';
import { runMigrations } from '../../lib/db/migrate';
import { enqueueBody, toEnqueueInput } from '../../lib/http/schemas';
import { createLogger } from '../../lib/log';
import { QueueError } from '../../lib/queue/errors';
import * as ops from '../../lib/queue/ops';
import { getStats, listWorkers } from '../../lib/queue/read';
import { type Doorbell, PgDoorbell, RedisDoorbell } from '../../lib/queue/signal';
import { resolveServices } from '../bootstrap';
import { addWorkerOptions, runWorkers, type WorkerCommandOptions } from './worker';

const log = createLogger({ role: 'cli' });

/** Opens what a verb needs, runs it, closes everything, and maps errors to exit codes. */
async function withQueue<T>(fn: (q: { pool: import('pg').Pool; doorbell: Doorbell }) => Promise<T>): Promise<T> {
  const cfg = loadConfig();
  const services = await resolveServices(cfg, log);
  const pool = createPool(services.databaseUrl, { name: 'cli', max: 4 });
  const doorbell: Doorbell = services.redisUrl
    ? new RedisDoorbell(services.redisUrl, cfg.redisPrefix, pool, log)
    : new PgDoorbell(pool, log);
  if (doorbell instanceof RedisDoorbell) {
    await new Promise((resolve) => {
      doorbell.redis.once('ready', resolve);
      setTimeout(resolve, 2_000).unref(); // unreachable: the doorbell falls back to NOTIFY
    });
  }
  try {
    return await fn({ pool, doorbell });
  } finally {
    if (doorbell instanceof RedisDoorbell) await doorbell.close();
    await pool.end();
    await services.embedded?.stop();
  }
}

const jobIdArg = (v: string) => {
  if (!/^[1-9][0-9]{0,18}$/.test(v)) throw new InvalidArgumentError('a job id is a positive integer');
  return v;
};

const parseJson = (what: string) => (v: string) => {
  try {
    return JSON.parse(v);
  } catch {
    throw new InvalidArgumentError(`${what} must be JSON`);
  }
};

function printReport(report: ops.ActionReport, json: boolean) {
  if (json) {
    console.log(JSON.stringify(report, (k, v) => (k === 'job' ? undefined : v)));
  } else {
    for (const i of report.items) console.log(`${i.id}\t${i.outcome}${i.reason ? `\t${i.reason}` : ''}`);
  }
  if (report.skipped > 0) process.exitCode = 1;
}

const program = new Command('leasehold')
  .description('Leasehold job queue: enqueue, inspect and put jobs right from the command line.')
  .showHelpAfterError()
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));

program
  .command('migrate')
  .description('apply the database migrations (safe when several processes run it at once)')
  .action(async () => {
    const cfg = loadConfig();
    const services = await resolveServices(cfg, log);
    await runMigrations(services.databaseUrl);
    await services.embedded?.stop();
    console.log('migrations applied');
  });

program
  .command('enqueue')
  .description('enqueue a job')
  .argument('<type>', 'job type, e.g. demo.sleep')
  .argument('[payload]', 'payload as JSON', parseJson('payload'), {})
  .option('-q, --queue <name>', 'queue', 'default')
  .option('--max-attempts <n>', 'attempts before the dead letter', (v) => Number(v))
  .option('--run-at <iso>', 'when it becomes due (ISO 8601 with a zone)')
  .option('--idempotency-key <key>', 'a second enqueue with the same key returns the first job')
  .option('--json', 'print JSON')
  .action(async (type: string, payload: unknown, o) => {
    const body = enqueueBody.safeParse({
      type,
      payload,
      queue: o.queue,
      maxAttempts: o.maxAttempts,
      runAt: o.runAt,
      idempotencyKey: o.idempotencyKey,
    });
    if (!body.success) throw new QueueError('invalid_request', body.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    const input = toEnqueueInput(body.data);
    const [r] = await withQueue(({ pool, doorbell }) => ops.jobEnqueue(pool, [input], { doorbell }));
    console.log(o.json ? JSON.stringify(r) : `${r!.id}${r!.created ? '' : '\t(existing job for this idempotency key)'}`);
  });

program
  .command('status')
  .description('counts per status and queue, and the worker processes')
  .option('--json', 'print JSON')
  .action(async (o) => {
    await withQueue(async ({ pool }) => {
      const [stats, workers] = await Promise.all([getStats(pool), listWorkers(pool)]);
      if (o.json) return console.log(JSON.stringify({ stats, workers }));
      console.table(stats.queues.map((q) => ({ queue: q.queue, ...q.counts })));
      console.log(`oldest due job waiting: ${stats.oldestQueuedAgeMs === null ? '—' : `${(stats.oldestQueuedAgeMs / 1000).toFixed(1)} s`}; running with an expired lease: ${stats.runningExpired}; workers alive: ${stats.workersAlive}`);
      const alive = workers.filter((w) => !w.stoppedAt && w.heartbeatAgeMs < 60_000);
      if (alive.length) console.table(alive.map((w) => ({ worker: w.workerId, jobs: w.jobsInHand, heartbeat: `${(w.heartbeatAgeMs / 1000).toFixed(1)} s ago` })));
    });
  });

program
  .command('recover')
  .description('move running jobs with expired leases on, and re-ring due jobs whose signal was lost')
  .option('--dry-run', 'only show what would be touched')
  .option('--json', 'print JSON')
  .action(async (o) => {
    const cfg = loadConfig();
    const r = await withQueue(({ pool, doorbell }) => ops.jobRecover(pool, { dryRun: !!o.dryRun, doorbell, signalGraceMs: cfg.signalGraceMs }));
    if (o.json) return console.log(JSON.stringify(r));
    const verb = o.dryRun ? 'would move' : 'moved';
    console.log(`${verb} ${r.expired.length} job(s) with an expired lease`);
    for (const e of r.expired) console.log(`  ${e.id}\t${e.type}\ton ${e.workerId}, expired ${(e.expiredMs / 1000).toFixed(1)} s ago\t→ ${e.status}`);
    console.log(`${o.dryRun ? 'would re-ring' : 're-rang'} ${r.resignalled.length} waiting job(s)`);
  });

program
  .command('requeue')
  .description('put finished jobs back in the queue (a running job only with --revoke-lease)')
  .argument('<ids...>', 'job ids', (v, prev: string[] = []) => [...prev, jobIdArg(v)])
  .option('--reset-attempts', 'grant a whole fresh attempt budget')
  .option('--revoke-lease', 'take a running job away from its worker (its writes are then refused)')
  .option('--json', 'print JSON')
  .action(async (ids: string[], o) => {
    const r = await withQueue(({ pool, doorbell }) => ops.jobRequeue(pool, { ids, resetAttempts: !!o.resetAttempts, revokeLease: !!o.revokeLease, doorbell }));
    printReport(r, !!o.json);
  });

program
  .command('cancel')
  .description('cancel waiting jobs; ask running ones to stop')
  .argument('<ids...>', 'job ids', (v, prev: string[] = []) => [...prev, jobIdArg(v)])
  .option('--json', 'print JSON')
  .action(async (ids: string[], o) => {
    printReport(await withQueue(({ pool }) => ops.jobCancel(pool, { ids })), !!o.json);
  });

addWorkerOptions(program.command('worker').description('run worker processes (as npm run worker)')).action(
  async (o: WorkerCommandOptions) => {
    await runWorkers(o);
  },
);

try {
  await program.parseAsync();
} catch (err) {
  if (err instanceof QueueError) {
    console.error(`leasehold: ${err.message}`);
    process.exit(err.code === 'not_found' || err.code === 'state_forbids' ? 1 : 2);
  }
  const code = (err as { code?: string }).code;
  if (code === 'ECONNREFUSED' || code === '57P01' || code === '3D000' || code === '28P01') {
    console.error(`leasehold: cannot reach the database: ${(err as Error).message}`);
    process.exit(3);
  }
  console.error(`leasehold: ${(err as Error).stack ?? err}`);
  process.exit(1);
}

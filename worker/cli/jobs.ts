/** `leasehold status`, `leasehold jobs`, `leasehold show ID`: reading the queue. */
import type { Command } from 'commander';
import { loadConfig } from '../../lib/config';
import { detailDto, pageDto, statsDto, workerDto } from '../../lib/http/dto';
import { listQuery } from '../../lib/http/schemas';
import { placeInLine } from '../../lib/api/priority';
import { QueueError } from '../../lib/queue/errors';
import { getJobPage } from '../../lib/queue/job-page';
import { countWorkers, getStats, listJobs, listWorkers } from '../../lib/queue/read';
import { JOB_STATUSES } from '../../lib/queue/status';
import { EXIT_CODES_HELP, ago, examplesHelp, issueText, jobIdArg, printJson, printTable, time, visible, withQueueReadOnly } from './common';

/** Whitespace folded to one space, then what is left of control characters made visible, cut at `max`. */
const oneLine = (s: string | null, max = 60) => {
  if (s === null) return null;
  const t = visible(s.replace(/\s+/g, ' '));
  return t.length > max ? t.slice(0, max) + '…' : t;
};

export function addReadCommands(program: Command) {
  program
    .command('status')
    .summary('counts per status and queue, and the live worker processes')
    .description('Counts per status and queue, the oldest due job, expired leases, and the worker processes alive.')
    .option('--json', 'print JSON: {stats, workers, workersTotal} as GET /api/stats and GET /api/workers answer')
    .addHelpText('after', examplesHelp('leasehold status', `leasehold status --json | jq '.workersTotal'`))
    .action(async (o: { json?: boolean }) => {
      // Alive means a heartbeat within one lease, as the console counts (lib/server/console-reads.ts).
      const { leaseMs } = loadConfig();
      await withQueueReadOnly(async ({ pool }) => {
        const [stats, workers, total] = await Promise.all([getStats(pool, { aliveWithinMs: leaseMs }), listWorkers(pool, { staleAfterMs: leaseMs }), countWorkers(pool)]);
        // workersTotal: every row on file, as GET /api/workers' total (the list stops at WORKERS_LISTED).
        if (o.json) return printJson({ stats: statsDto(stats), workers: workers.map(workerDto), workersTotal: Math.max(total, workers.length) });
        printTable(
          ['queue', ...JOB_STATUSES],
          [
            ...stats.queues.map((q) => [q.queue, ...JOB_STATUSES.map((s) => q.counts[s])]),
            ['(all)', ...JOB_STATUSES.map((s) => stats.counts[s])],
          ],
        );
        console.log(
          `oldest due job waiting: ${ago(stats.oldestQueuedAgeMs)} · running with an expired lease: ${stats.runningExpired} · workers alive: ${stats.workersAlive}` +
            (stats.schedulesFailing ? ` · schedules that cannot tick: ${stats.schedulesFailing} (schedule list says why)` : '') +
            (stats.schedulesSkipping ? ` · schedules skipping, a run unfinished: ${stats.schedulesSkipping} (schedule list says which)` : ''),
        );
        const alive = workers.filter((w) => !w.stoppedAt && !w.stale);
        if (alive.length) {
          printTable(
            ['worker', 'queues', 'jobs in hand', 'concurrency', 'heartbeat', 'started'],
            alive.map((w) => [w.workerId, w.queues.join(','), w.jobsInHand, w.concurrency, `${ago(w.heartbeatAgeMs)} ago`, time(w.startedAt)]),
          );
        }
      });
    });

  program
    .command('jobs')
    .summary('list jobs with the console\'s filters')
    .description('List jobs, newest first, with the filters of the console and GET /api/jobs; one keyset page at a time.')
    .option('-s, --status <status>', `one of ${JOB_STATUSES.join(', ')}`)
    .option('-q, --queue <name>', 'queue')
    .option('-t, --type <type>', 'job type')
    .option('-w, --worker <id>', 'worker id that holds (or last held) the job')
    .option('--min-attempts <n>', 'jobs claimed at least n times (2: those that needed more than one try)')
    .option('--priority <n>', 'jobs of this priority (0-9)')
    .option('--due <when>', 'waiting jobs due now, or later (scheduled, or a retry backing off)')
    .option('--created-since <when>', 'enqueued since: a span back from now (15m, 1h, 24h, 7d) or an ISO 8601 moment')
    .option('--finished-since <when>', 'finished (completed, failed or cancelled) since: as --created-since')
    .option('--q <text>', 'a job id, or text in the last error')
    .option('-n, --limit <n>', 'jobs per page (1–200)', '50')
    .option('--cursor <id>', 'the next page: the cursor printed under the previous one')
    .option('--json', 'print JSON as GET /api/jobs answers ({jobs, nextCursor, dbNow})')
    .addHelpText('after', `\nExamples:\n  leasehold jobs --status failed --queue mail\n  leasehold jobs --status failed --finished-since 1h\n  leasehold jobs --q "timeout" --json | jq -r '.jobs[].id'\n${EXIT_CODES_HELP}`)
    .action(async (o: Record<string, string | boolean | undefined>) => {
      const { json, ...filters } = o;
      const parsed = listQuery.safeParse(Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined)));
      if (!parsed.success) throw new QueueError('invalid_request', issueText(parsed.error.issues));
      await withQueueReadOnly(async ({ pool }) => {
        const page = await listJobs(pool, parsed.data);
        if (json) return printJson(pageDto(page));
        if (!page.jobs.length) return console.log('no jobs match');
        printTable(
          ['id', 'status', 'queue', 'type', 'priority', 'attempts', 'worker', 'created', 'error'],
          page.jobs.map((j) => [j.id, j.status, j.queue, j.type, j.priority, `${j.attemptCount}/${j.maxAttempts}`, j.workerId, time(j.createdAt), oneLine(j.error)]),
        );
        if (page.nextCursor) console.error(`more: --cursor ${page.nextCursor}`);
      });
    });

  program
    .command('show')
    .summary('one job with its attempts')
    .description('One job with every attempt (who, when, how it ended, the error), as GET /api/jobs/:id.')
    .argument('<id>', 'job id', jobIdArg)
    .option('--json', 'print JSON as GET /api/jobs/:id answers')
    .addHelpText('after', examplesHelp('leasehold show 42', `leasehold show 42 --json | jq '.attempts[-1].error'`))
    .action(async (id: string, o: { json?: boolean }) => {
      await withQueueReadOnly(async ({ pool }) => {
        // As its page says it: who could run it, its place in line.
        const d = await getJobPage(pool, id, loadConfig());
        if (!d) throw new QueueError('not_found', `no job with id ${id}`);
        const dto = detailDto(d);
        if (o.json) return printJson(dto);
        const j = dto.job;
        printTable(
          ['field', 'value'],
          [
            ['id', j.id],
            ['status', j.status + (j.cancelRequestedAt ? ' (cancel requested)' : '')],
            ['queue / type', `${j.queue} / ${j.type}`],
            ['attempts', `${j.attemptCount} of ${j.maxAttempts}`],
            ['priority', j.priority],
            ...(dto.ahead ? [['in line', placeInLine(dto.ahead, j.priority)]] : []),
            ['worker', j.workerId],
            ['lease', j.leaseRemainingMs === null ? null : j.leaseRemainingMs >= 0 ? `${ago(j.leaseRemainingMs)} left` : `expired ${ago(-j.leaseRemainingMs)} ago (the recover sweep moves it)`],
            ['run at', time(j.runAt)],
            ['created', time(j.createdAt)],
            ['finished', time(j.finishedAt)],
            ['idempotency key', j.idempotencyKey],
            ['singleton key', j.singletonKey],
            ['payload', oneLine(JSON.stringify(j.payload), 200)],
            ['error', oneLine(j.error, 200)],
          ],
        );
        if (dto.attempts.length) {
          printTable(
            ['attempt', 'worker', 'started', 'finished', 'outcome', 'error'],
            dto.attempts.map((a) => [a.attempt, a.workerId, time(a.startedAt), time(a.finishedAt), a.outcome ?? 'running', oneLine(a.error)]),
          );
        }
      });
    });
}

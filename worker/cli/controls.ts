/**
 * `queue` and `schedule` verbs: pause/resume and limit queues (every worker on every host
 * honours them at claim time), and define, run, pause and resume recurring jobs.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { controlledQueueName, enqueueBody, toEnqueueInput, toScheduleInput } from '../../lib/http/schemas';
import { loadConfig } from '../../lib/config';
import { scheduleDefinedDetails, scheduleDefinedOutcome } from '../../lib/audit/log';
import { QueueError } from '../../lib/queue/errors';
import { queueControlDto, queueControlsChangeDto, scheduleDto } from '../../lib/http/dto';
import { dbNow } from '../../lib/queue/read';
import { DEFAULT_PRIORITY, PRIORITY_LEVELS, SCHEDULE_OVERLAPS } from '../../lib/queue/job';
import * as ops from '../../lib/queue/ops';
import { auditCli, examplesHelp, intArg, issueText, jobTypesFrom, jsonArg, printJson, printTable as table, reasonArg, schemaArg, visible, withQueue, withQueueReadOnly } from './common';

const nameArg = schemaArg(controlledQueueName);

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** "10/1s", "100/m", "5/500ms" → {rateLimit, ratePeriodMs}; "none" → cleared. */
export function parseRate(v: string): { rateLimit: number; ratePeriodMs: number } {
  if (v === 'none' || v === '0') return { rateLimit: 0, ratePeriodMs: 0 };
  const m = /^(\d{1,9})\/(\d{0,9})(ms|s|m|h)$/.exec(v.trim());
  if (!m || Number(m[1]) < 1) throw new InvalidArgumentError('a rate is N/PERIOD, e.g. 10/1s, 100/m, 5/500ms (or none)');
  if (Number(m[1]) > 1_000_000) throw new InvalidArgumentError('a rate is at most 1000000 per period (as the API takes)');
  const period = Number(m[2] || 1) * UNITS[m[3]!]!;
  if (period < 1 || period > 86_400_000) throw new InvalidArgumentError('the rate period must be between 1 ms and 24 h');
  return { rateLimit: Number(m[1]), ratePeriodMs: period };
}

const limitArg = (v: string) => (v === 'none' ? 0 : intArg(1, 100_000)(v));

/** The queues' controls; with --json as GET /api/queues answers. */
function showControls(list: ops.QueueControl[], json: boolean) {
  if (json) return printJson({ queues: list.map(queueControlDto) });
  if (!list.length) return console.log('no queue is paused or limited');
  table(
    ['queue', 'paused', 'running', 'concurrency limit', 'rate limit', 'tokens'],
    list.map((c) => [
      c.name,
      c.paused ? 'yes' : '',
      String(c.running),
      c.concurrencyLimit === null ? '' : `${c.running}/${c.concurrencyLimit}`,
      c.rateLimit === null ? '' : `${c.rateLimit} per ${c.ratePeriodMs} ms`,
      c.rateTokens === null ? '' : String(c.rateTokens),
    ]),
  );
}

export function addControlCommands(program: Command) {
  const queue = program.command('queue').description('pause, resume and limit queues (honoured by every worker on every host)');
  queue
    .command('list')
    .description('the queues that are paused or limited, with their running jobs against the limit')
    .option('--json', 'print JSON')
    .addHelpText('after', examplesHelp('leasehold queue list', 'leasehold queue list --json'))
    .action(async (o) => showControls(await withQueueReadOnly((q) => ops.queueControls(q.pool)), !!o.json));
  for (const [verb, paused] of [['pause', true], ['resume', false]] as const) {
    queue
      .command(verb)
      .description(paused ? 'stop workers claiming from a queue (running jobs finish)' : 'let workers claim from a paused queue again')
      .argument('<name>', 'queue', nameArg)
      .option('--reason <text>', 'why (kept in the audit log; at most 500 characters)', reasonArg)
      .option('--json', 'print JSON')
      .addHelpText('after', examplesHelp(`leasehold queue ${verb} mail${paused ? ' --reason "the mail provider is down"' : ''}`))
      .action(async (name: string, o) => {
        const { controls, changed, inUse } = await withQueue(async (q) => {
          const change = await auditCli(q.pool, { action: `queue.${verb}`, target: { queue: name }, reason: o.reason }, () => ops.queueChangeControls(q.pool, { name, paused }), ops.controlsChangeCounted);
          // Only for a note: the change is made and audited whatever this read does.
          const inUse = await ops.queueInUse(q.pool, { queue: name, aliveWithinMs: loadConfig().leaseMs }).catch(() => true);
          return { ...change, inUse };
        });
        // Pausing a queue before its jobs arrive is allowed; a name nothing uses is more often a typo.
        if (!inUse) console.error(`note: no job waits in ${visible(name)} and no live worker or schedule names it: is the name right?`);
        if (o.json) return printJson(queueControlsChangeDto(name, controls, changed));
        console.log(`${visible(name)}: ${changed ? (paused ? 'paused' : 'resumed') : paused ? 'was already paused' : 'was not paused'}`);
      });
  }
  queue
    .command('limit')
    .description('set or clear a global concurrency limit and a rate limit (enforced at claim time across all workers)')
    .argument('<name>', 'queue', nameArg)
    .option('--concurrency <n>', 'most jobs running at once over every worker and host (none = clear)', limitArg)
    .option('--rate <n/period>', 'claims per period over every worker, e.g. 10/1s: a token bucket of that size, so up to 10 at once after a quiet spell, then 10 per second (none = clear)', parseRate)
    .option('--reason <text>', 'why (kept in the audit log; at most 500 characters)', reasonArg)
    .option('--json', 'print JSON')
    .addHelpText('after', examplesHelp('leasehold queue limit llm --concurrency 5 --rate 10/1s', 'leasehold queue limit llm --concurrency none --rate none'))
    .action(async (name: string, o) => {
      if (o.concurrency === undefined && o.rate === undefined) throw new QueueError('invalid_request', 'give --concurrency and/or --rate');
      const { controls: c, changed } = await withQueue(async (q) => {
        const p = { concurrencyLimit: o.concurrency, rateLimit: o.rate?.rateLimit, ratePeriodMs: o.rate?.ratePeriodMs };
        return auditCli(q.pool, { action: 'queue.limits', target: { queue: name }, reason: o.reason, details: p }, () => ops.queueChangeControls(q.pool, { name, ...p }), ops.controlsChangeCounted);
      });
      if (o.json) return printJson(queueControlsChangeDto(name, c, changed));
      showControls(c ? [c] : [], false);
    });

  const schedule = program.command('schedule').description('recurring jobs from cron expressions (each tick enqueued exactly once)');
  schedule
    .command('add')
    .description('define (or redefine) a recurring job (a paused one stays paused)')
    .argument('<name>', 'schedule name')
    .requiredOption('--cron <expr>', 'five fields, or six with seconds first ("* * * * * *" = every second)')
    .requiredOption('--type <type>', 'job type')
    .option('--payload <json>', 'payload as JSON', jsonArg('payload'), {})
    .option('-q, --queue <name>', 'queue', 'default')
    .option('--tz <zone>', 'time zone of the cron expression', 'UTC')
    .option('--max-attempts <n>', "attempts per run (default: the job type's, else 3)", intArg(1, 100))
    .option('--priority <n>', 'priority of its jobs: 0 (the default: runs first) to 9 (runs last)', intArg(0, PRIORITY_LEVELS - 1), DEFAULT_PRIORITY)
    .addOption(
      new Option(
        '--overlap <policy>',
        'allow: every tick enqueues a job; skip: a tick while a run of it is still queued, retrying or running is skipped (default: allow for a new schedule, what it was for a redefined one)',
      ).choices(SCHEDULE_OVERLAPS),
    )
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examplesHelp(
        `leasehold schedule add nightly-report --cron "0 3 * * *" --tz Europe/Paris \\\n    --type report.build --payload '{"kind":"daily"}'`,
        'leasehold schedule add heartbeat --cron "*/10 * * * * *" --type demo.noop \\\n    --overlap skip',
      ),
    )
    .action(async (name: string, o) => {
      const parsed = enqueueBody.safeParse({ type: o.type, payload: o.payload, queue: o.queue, maxAttempts: o.maxAttempts, priority: o.priority });
      if (!parsed.success) throw new QueueError('invalid_request', issueText(parsed.error.issues));
      const { schedule: s } = await withQueue(async (q) => {
        const input = toEnqueueInput(parsed.data, '', await jobTypesFrom(async () => q.pool)(parsed.data.type));
        const definition = toScheduleInput(name, o.cron, o.tz, input, o.overlap);
        return auditCli(
          q.pool,
          { action: 'schedule.add', target: { schedule: name }, details: scheduleDefinedDetails(definition) },
          () => ops.scheduleDefine(q.pool, definition),
          scheduleDefinedOutcome,
        );
      });
      if (o.json) return printJson({ schedule: scheduleDto(s) });
      console.log(
        visible(
          `${s.name}: ${s.cron} (${s.timezone}) → ${s.type} on ${s.queue}${s.overlap === 'skip' ? ', one run at a time' : ''}; ` +
            (s.paused ? 'paused (schedule resume to run it again)' : `next run ${s.nextRunAt.toISOString()}`),
        ),
      );
    });
  schedule
    .command('list')
    .description('the recurring jobs')
    .option('--json', 'print JSON')
    .addHelpText('after', examplesHelp('leasehold schedule list', 'leasehold schedule list --json'))
    .action(async (o) => {
      const [list, now] = await withQueueReadOnly((q) => Promise.all([ops.scheduleList(q.pool), dbNow(q.pool)]));
      // As GET /api/schedules answers.
      if (o.json) return printJson({ schedules: list.map(scheduleDto), dbNow: now.toISOString() });
      if (!list.length) return console.log('no schedules');
      table(
        ['name', 'cron', 'zone', 'type', 'queue', 'enabled', 'overlap', 'next run', 'last job', 'last skipped'],
        // A paused schedule's next_run_at is the tick it stopped at, not one that will run.
        list.map((s) => [
          s.name,
          s.cron,
          s.timezone,
          s.type,
          s.queue,
          s.enabled ? 'yes' : 'no',
          s.overlap,
          s.paused ? 'paused' : s.nextRunAt.toISOString(),
          s.lastJobId ?? '',
          // Said while it skips overlaps and since its last run: an old skip is no news.
          s.overlap === 'skip' && s.lastSkippedAt && (!s.lastRunAt || s.lastSkippedAt > s.lastRunAt) ? `${s.lastSkippedAt.toISOString()} (job ${s.lastSkippedJobId} unfinished)` : '',
        ]),
      );
      for (const s of list) {
        if (s.lastError) console.log(visible(`${s.name}: its due tick cannot be enqueued (last tried ${s.lastErrorAt?.toISOString()}): ${s.lastError}`));
      }
    });
  schedule
    .command('run')
    .description("enqueue the job the schedule's ticks make, now (its next tick stays where it is); a repeat within a second or so gives the same job")
    .argument('<name>', 'schedule name')
    .option('--reason <text>', 'why (kept in the audit log; at most 500 characters)', reasonArg)
    .option('--json', 'print JSON')
    .addHelpText('after', examplesHelp('leasehold schedule run nightly-report --reason "rerun after the fix"'))
    .action(async (name: string, o) => {
      const r = await withQueue((q) =>
        auditCli(
          q.pool,
          { action: 'schedule.run', target: { schedule: name }, reason: o.reason },
          () => ops.scheduleRunNow(q.pool, { name, doorbell: q.doorbell }),
          (r) => ({ changed: r.created ? 1 : 0, skipped: r.created ? 0 : 1, jobIds: [r.id], details: { created: r.created, ...(r.overlapping ? { overlapping: true } : {}) } }),
        ),
      );
      if (o.json) return printJson(r);
      if (r.overlapping) return console.log(visible(`${name}: runs one at a time, and job ${r.id} on ${r.queue} is still unfinished; no second job was made`));
      console.log(visible(`${name}: ${r.created ? 'enqueued' : 'already enqueued a moment ago:'} job ${r.id} on ${r.queue}`));
    });
  for (const verb of ['pause', 'resume'] as const) {
    schedule
      .command(verb)
      .description(
        verb === 'pause'
          ? 'stop a schedule ticking until it is resumed (jobs already enqueued are left alone)'
          : 'let a paused schedule tick again, from its next tick after now (the ticks missed while paused are not owed)',
      )
      .argument('<name>', 'schedule name')
      .option('--reason <text>', 'why (kept in the audit log; at most 500 characters)', reasonArg)
      .option('--json', 'print JSON')
      .addHelpText('after', examplesHelp(`leasehold schedule ${verb} nightly-report${verb === 'pause' ? ' --reason "the warehouse is migrating"' : ''}`))
      .action(async (name: string, o) => {
        const r = await withQueue((q) =>
          auditCli(
            q.pool,
            { action: `schedule.${verb}`, target: { schedule: name }, reason: o.reason },
            () => (verb === 'pause' ? ops.schedulePause(q.pool, name) : ops.scheduleResume(q.pool, name)),
            (r) => ({ changed: r.changed ? 1 : 0, skipped: r.changed ? 0 : 1 }),
          ),
        );
        if (o.json) return printJson(r);
        const state = verb === 'pause' ? 'paused' : `running; next run ${r.schedule.nextRunAt.toISOString()}`;
        console.log(visible(`${name}: ${r.changed ? '' : 'already '}${state}`));
      });
  }
  schedule
    .command('remove')
    .description('delete a recurring job (jobs it already enqueued stay)')
    .argument('<name>', 'schedule name')
    .option('--reason <text>', 'why (kept in the audit log; at most 500 characters)', reasonArg)
    .option('--json', 'print JSON')
    .addHelpText('after', examplesHelp('leasehold schedule remove nightly-report --reason "replaced by weekly-report"'))
    .action(async (name: string, o: { reason?: string; json?: boolean }) => {
      // Refused from inside the audited action: a schedule that does not exist leaves no entry.
      await withQueue((q) =>
        auditCli(
          q.pool,
          { action: 'schedule.remove', target: { schedule: name }, reason: o.reason },
          async () => {
            if (!(await ops.scheduleDelete(q.pool, name))) throw new QueueError('not_found', `no schedule ${JSON.stringify(name)}`);
          },
          () => ({ changed: 1, skipped: 0 }),
        ),
      );
      // As DELETE /api/schedules/:name answers.
      if (o.json) return printJson({ removed: name });
      console.log(`${visible(name)}: removed`);
    });
}

/**
 * `leasehold requeue`, `cancel`, `reschedule`, `recover`: the operator actions, through the same
 * lib/queue/ops functions as the console's buttons. requeue and cancel take ids, or a
 * filter that is resolved to ids page by page (keyset, newest first) and acted on in
 * batches of up to 1000, each batch one compare-and-swap statement.
 */
import { type Command, Option } from 'commander';
import { jobActionEntry, rescheduleEntry } from '../../lib/audit/log';
import { jobFilter, MAX_BULK_IDS, rescheduleBody } from '../../lib/http/schemas';
import { PRIORITY_LEVELS } from '../../lib/queue/job';
import { QueueError } from '../../lib/queue/errors';
import * as ops from '../../lib/queue/ops';
import type { Seen, SeenJobs } from '../../lib/queue/job';
import { requeueOrder } from '../../lib/queue/bulk';
import { listJobIds } from '../../lib/queue/read';
import { JOB_STATUSES } from '../../lib/queue/status';
import { loadConfig } from '../../lib/config';
import { FsResultStore, resultsDir } from '../../lib/results';
import {
  EXIT,
  EXIT_CODES_HELP,
  ago,
  examplesHelp,
  exitAtLeast,
  intArg,
  issueText,
  namedByFlag,
  jobIdsArg,
  printJson,
  printTable,
  progressBar,
  progressEnabled,
  withQueue,
  auditCli,
  type Queue,
  reasonArg,
  visible,
} from './common';

interface FilterOptions {
  status?: string;
  queue?: string;
  type?: string;
  worker?: string;
  q?: string;
  limit?: number;
  dryRun?: boolean;
  progress?: boolean;
  json?: boolean;
  reason?: string;
}

const addFilterOptions = (cmd: Command) =>
  cmd
    .option('-s, --status <status>', `act on every job in this status (${JOB_STATUSES.join(', ')}) instead of ids`)
    .option('-q, --queue <name>', 'with --status: only this queue')
    .option('-t, --type <type>', 'with --status: only this job type')
    .option('-w, --worker <id>', 'with --status: only jobs held (or last held) by this worker')
    .option('--q <text>', 'with --status: only jobs whose last error contains this text')
    .option('-n, --limit <n>', 'with --status: act on at most n jobs (newest first)', intArg(1, Number.MAX_SAFE_INTEGER))
    .option('--dry-run', 'with --status: only count the jobs that match')
    .option('--progress', 'show a progress bar on stderr even when it is not a terminal')
    .option('--no-progress', 'never show a progress bar')
    .option('--json', 'print JSON')
    .option('--reason <text>', 'why (kept in the audit log; at most 500 characters)', reasonArg);

/** Acts on these ids; `seen`: the jobs as a filter's resolution saw them (statements/fragments.ts asSeen), absent for ids given by hand. */
type Act = (q: Queue, ids: string[], seen?: SeenJobs) => Promise<ops.ActionReport>;

/**
 * Ids from the arguments, or every job matching the filter (resolved page by page). `how`:
 * the action's options, kept in its audit entry as the API keeps them (a requeue's
 * resetAttempts and revokeLease: the log says "revoked live leases").
 */
async function resolveAndAct(verb: 'requeue' | 'cancel', ids: string[], o: FilterOptions, act: Act, how: Record<string, boolean> = {}) {
  const filtered = o.status !== undefined;
  const filterOnly = ['queue', 'type', 'worker', 'q', 'limit', 'dryRun'] as const;
  if (ids.length && filtered) throw new QueueError('invalid_request', `give job ids or --status with filters, not both`);
  // A filter flag beside ids would be ignored, and a --dry-run ignored writes: refused, never dropped.
  const stray = filterOnly.filter((k) => o[k] !== undefined).map((k) => (k === 'dryRun' ? 'dry-run' : k));
  if (!filtered && stray.length) {
    throw new QueueError(
      'invalid_request',
      ids.length ? `--${stray[0]} goes with --status (a bulk ${verb}), not with job ids: nothing was ${verb === 'requeue' ? 'requeued' : 'cancelled'}` : `--${stray[0]} needs --status (bulk ${verb} acts on one status at a time)`,
    );
  }
  if (!ids.length && !filtered) throw new QueueError('invalid_request', `give job ids, or --status (and filters) for a bulk ${verb}`);
  if (!filtered) {
    if (ids.length > MAX_BULK_IDS) throw new QueueError('invalid_request', `at most ${MAX_BULK_IDS} ids at once; use --status with filters for more`);
    const { entry, outcome } = jobActionEntry(verb, ids, o.reason, how);
    const r = await withQueue((q) => auditCli(q.pool, entry, () => act(q, ids), outcome));
    printReport(r, !!o.json);
    return;
  }
  const parsed = jobFilter.safeParse({ status: o.status, queue: o.queue, type: o.type, worker: o.worker, q: o.q });
  if (!parsed.success) throw new QueueError('invalid_request', issueText(parsed.error.issues));
  const filters = parsed.data;
  const limit = o.limit ?? Number.POSITIVE_INFINITY;
  const showProgress = progressEnabled(o.progress);

  await withQueue(async (q) => {
    // 1. Resolve the filter to ids first: the set acted on is the jobs that matched when the
    //    command started (jobs that enter the status meanwhile are not swept up).
    const matched: string[] = [];
    const seen = new Map<string, Seen>();
    const finding = progressBar(showProgress, { label: 'finding jobs', total: null });
    let cursor: string | undefined;
    do {
      const page = await listJobIds(q.pool, { ...filters, cursor, limit: Math.min(MAX_BULK_IDS, limit - matched.length) });
      matched.push(...page.ids);
      for (const [id, s] of page.seen) seen.set(id, s);
      finding.update(matched.length);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && matched.length < limit);
    finding.stop();
    if (o.dryRun) {
      if (o.json) return printJson({ dryRun: true, matched: matched.length });
      return console.log(`dry run: ${matched.length} job(s) match; nothing changed`);
    }

    // 2. Act batch by batch; each batch is one CAS statement that re-checks every row, and
    //    leaves alone a job that changed since step 1 (requeued, claimed, finished again).
    const total = await auditCli(
      q.pool,
      { action: `bulk.${verb}`, target: { filter: filters, limit: o.limit ?? null }, jobIds: matched, reason: o.reason, details: { ...how, matched: matched.length } },
      async () => {
        const t = { matched: matched.length, changed: 0, skipped: 0, outcomes: {} as Record<string, number>, skippedReasons: {} as Record<string, number> };
        const bar = progressBar(showProgress, { label: verb, total: matched.length, unit: 'jobs' });
        const order = verb === 'requeue' ? requeueOrder(matched) : matched;
        for (let k = 0; k < order.length; k += MAX_BULK_IDS) {
          const r = await act(q, order.slice(k, k + MAX_BULK_IDS), seen);
          t.changed += r.changed;
          t.skipped += r.skipped;
          for (const i of r.items) {
            t.outcomes[i.outcome] = (t.outcomes[i.outcome] ?? 0) + 1;
            if (!i.ok) t.skippedReasons[i.reason ?? i.outcome] = (t.skippedReasons[i.reason ?? i.outcome] ?? 0) + 1;
          }
          bar.update(Math.min(k + MAX_BULK_IDS, matched.length));
        }
        bar.stop();
        return t;
      },
      (t) => ({ changed: t.changed, skipped: t.skipped, details: { outcomes: t.outcomes } }),
    );
    if (total.skipped) exitAtLeast(EXIT.refused);
    if (o.json) return printJson(total);
    const outcomes = Object.entries(total.outcomes).map(([k, n]) => `${n} ${k}`).join(', ');
    console.log(`${total.matched} job(s) matched${outcomes ? `: ${outcomes}` : ''}`);
    // A job that changed between the lookup and the statement is skipped with its reason.
    for (const [reason, n] of Object.entries(total.skippedReasons)) console.log(`  skipped ${n}: ${visible(reason)}`);
  }, { reads: !!o.dryRun });
}

function printReport(report: ops.ActionReport, json: boolean) {
  if (report.skipped > 0) exitAtLeast(EXIT.refused);
  if (json) return printJson({ changed: report.changed, skipped: report.skipped, items: report.items.map(({ job: _job, ...i }) => i) });
  for (const i of report.items) console.log(`${i.id}\t${i.outcome}${i.reason ? `\t${visible(i.reason)}` : ''}`);
}

export function addActionCommands(program: Command) {
  addFilterOptions(
    program
      .command('requeue')
      .summary('put jobs back in the queue: by id, or every job matching a filter')
      .description(
        'Put finished (failed, cancelled, completed) or backing-off jobs back in the queue, due now. A running job is ' +
          'refused unless --revoke-lease is given. Jobs are given as ids, or with --status (and filters) for a bulk requeue: ' +
          'the filter is resolved to ids page by page, then requeued in batches of 1000, each batch one CAS statement ' +
          'that re-checks every job (one that changed meanwhile is skipped and counted with the reason).',
      )
      .argument('[ids...]', 'job ids', jobIdsArg, [] as string[])
      .option('--reset-attempts', 'grant a whole fresh attempt budget')
      .option('--revoke-lease', 'take a running job away from its worker (its writes are then refused)'),
  )
    .addHelpText('after', `\nExamples:\n  leasehold requeue 42 43\n  leasehold requeue --status failed --queue mail --type email.send --limit 500\n${EXIT_CODES_HELP}`)
    .action(async (ids: string[], o: FilterOptions & { resetAttempts?: boolean; revokeLease?: boolean }) => {
      // A completed job's last result is let go: deleted here, as the console does.
      const results = new FsResultStore(resultsDir(loadConfig()));
      const how = { resetAttempts: !!o.resetAttempts, revokeLease: !!o.revokeLease };
      await resolveAndAct('requeue', ids, o, ({ pool, doorbell }, batch, seen) => ops.jobRequeue(pool, { ids: batch, ...how, doorbell, results, seen }), how);
    });

  addFilterOptions(
    program
      .command('cancel')
      .summary('cancel jobs: by id, or every job matching a filter')
      .description(
        'Cancel waiting (queued, retrying) jobs at once; ask running ones to stop (the handler aborts at its next ' +
          'heartbeat). Jobs are given as ids, or with --status (and filters) for a bulk cancel, resolved and acted on ' +
          'in batches of 1000 as for requeue.',
      )
      .argument('[ids...]', 'job ids', jobIdsArg, [] as string[]),
  )
    .addHelpText('after', `\nExamples:\n  leasehold cancel 42\n  leasehold cancel --status queued --queue imports\n${EXIT_CODES_HELP}`)
    .action(async (ids: string[], o: FilterOptions) => {
      await resolveAndAct('cancel', ids, o, ({ pool }, batch, seen) => ops.jobCancel(pool, { ids: batch, seen }));
    });

  program
    .command('reschedule')
    .summary('move waiting jobs: a new due time, a new priority, or both')
    .description(
      'Move waiting (queued, retrying) jobs: --at sets when they are due (a time already past: now), --priority ' +
        'their priority. One CAS statement that refuses a job that runs or has finished (requeue one to run it ' +
        'again); the attempts, budget and checkpoints stay. Due afterwards, a job is rung at its new level.',
    )
    .argument('<ids...>', 'job ids', jobIdsArg, [] as string[])
    .option('--at <time>', 'when they are due: an ISO 8601 date-time with a time zone, e.g. 2026-12-24T08:00:00Z')
    .option('--priority <n>', '0 (runs first) to 9 (runs last)', intArg(0, PRIORITY_LEVELS - 1))
    .option('--json', 'print JSON')
    .option('--reason <text>', 'why (kept in the audit log; at most 500 characters)', reasonArg)
    .addHelpText('after', `\nExamples:\n  leasehold reschedule 42 --priority 0\n  leasehold reschedule 42 43 --at 2026-12-24T08:00:00Z\n${EXIT_CODES_HELP}`)
    .action(async (ids: string[], o: { at?: string; priority?: number; json?: boolean; reason?: string }) => {
      if (o.at === undefined && o.priority === undefined) throw new QueueError('invalid_request', 'give --at, --priority or both: there is nothing to change');
      const body = rescheduleBody.safeParse({ runAt: o.at, priority: o.priority });
      if (!body.success) throw new QueueError('invalid_request', namedByFlag(issueText(body.error.issues), { runAt: '--at' }));
      if (ids.length > MAX_BULK_IDS) throw new QueueError('invalid_request', `at most ${MAX_BULK_IDS} ids at once`);
      const { runAt, priority } = body.data;
      const { entry, outcome } = rescheduleEntry(ids, o.reason, runAt, priority);
      const r = await withQueue((q) => auditCli(q.pool, entry, () => ops.jobReschedule(q.pool, { ids, runAt, priority, doorbell: q.doorbell }), outcome));
      printReport(r, !!o.json);
    });

  program
    .command('recover')
    .summary('move expired leases on; re-ring due jobs whose signal was lost')
    .description(
      'The recover sweep the workers run every few seconds, run now: running jobs whose lease expired move to ' +
        'retrying (or failed when their attempts are used up, or cancelled when a cancel was requested), and due ' +
        'jobs that waited past the grace with too few ids in Redis are rung again. --dry-run shows what it would do, ' +
        'as the console\'s preview does.',
    )
    .option('--dry-run', 'only show what would be touched')
    .option('--reason <text>', 'why (kept in the audit log; at most 500 characters)', reasonArg)
    .addOption(new Option('--json', 'print JSON as POST /api/recover answers'))
    .addHelpText('after', examplesHelp('leasehold recover --dry-run', 'leasehold recover --reason "a host was cut off"'))
    .action(async (o: { dryRun?: boolean; json?: boolean; reason?: string }) => {
      const cfg = loadConfig();
      const r = await withQueue(async ({ pool, doorbell }) => {
        const run = () => ops.jobRecover(pool, { dryRun: !!o.dryRun, doorbell, signalGraceMs: cfg.signalGraceMs, aliveWithinMs: cfg.leaseMs });
        if (o.dryRun) return run();
        return auditCli(pool, { action: 'recover', target: { all: true }, reason: o.reason }, run, (report) => ({
          jobIds: [...report.expired.map((e) => e.id), ...report.resignalled.map((x) => x.id)],
          changed: report.expired.length,
          skipped: 0,
          details: { resignalled: report.resignalled.length },
        }));
      }, { reads: !!o.dryRun });
      if (o.json) return printJson(r);
      const would = o.dryRun ? 'would move' : 'moved';
      console.log(`${would} ${r.moreMayChange ? 'at least ' : ''}${r.expired.length} job(s) with an expired lease`);
      if (r.moreMayChange) {
        console.log(o.dryRun ? '(the preview lists no more; a run moves up to 10,000 per sweep)' : '(more may be left: the next sweep, or another recover, moves them)');
      }
      if (r.expired.length) {
        printTable(
          ['id', 'type', 'queue', 'worker', 'attempts', 'expired', o.dryRun ? 'would become' : 'now'],
          r.expired.map((e) => [e.id, e.type, e.queue, e.workerId, `${e.attemptCount}/${e.maxAttempts}`, `${ago(e.expiredMs)} ago`, e.status]),
        );
      }
      console.log(`${o.dryRun ? 'would re-ring' : 're-rang'} ${r.resignalled.length} due job(s) whose signal was missing`);
      const queues = r.queues.filter((q) => q.pushed || r.resignalled.some((x) => x.queue === q.queue));
      if (queues.length) {
        printTable(
          ['queue', 'ids in Redis', o.dryRun ? 'would push' : 'pushed'],
          queues.map((q) => [q.queue, q.signalBacklog ?? 'no Redis', o.dryRun ? r.resignalled.filter((x) => x.queue === q.queue).length : q.pushed]),
        );
      }
    });
}

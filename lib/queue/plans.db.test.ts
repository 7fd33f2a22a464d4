/**
 * The hot statements' plans on a table of 200,000 jobs in mixed states: claims, heartbeats,
 * completions, failures and the recover sweep must be index scans — never a sequential
 * scan of jobs — in both the custom plan (first executions) and the generic plan that a
 * prepared statement switches to (forced here with plan_cache_mode).
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type pg from 'pg';
import { testDatabase } from '../../test/db';
import { waitFor } from '../../test/wait';
import type { Executor } from '../db/client';
import { createLogger } from '../log';
import { createMetricsSource } from '../metrics/source';
import { computeConsoleStats } from './console-stats';
import { readDeadLettered, readLeasesLost } from './failure-series';
import { deadLetterGroups } from './dead-letter';
import { ATTEMPTS_OF_JOB_SQL, countNewer, listJobs } from './read';
import { PgDoorbell } from './signal';
import { readLostLeases } from './type-metrics';
import * as sql from './statements';

const db = await testDatabase();
let ids: string[];
let lastInBacklog: string;

/**
 * A statement that takes the first rows of a queue's backlog in order must read them in
 * order from the index and stop at the LIMIT, never fetch the whole due backlog and sort
 * it. (A per-row NOT EXISTS on the queues table once made the planner expect one surviving
 * row and sort 300,000 due jobs for every claim: 0.4-0.9 s a claim.) Checked on the queue
 * with a backlog; for a queue whose due jobs all fit under the LIMIT a sort is the better plan.
 */
const BACKLOG = 'backlog';
/** A queue whose oldest due jobs are all of a type no worker has the handler for, with a few it has behind them. */
const STRANDED = 'stranded';

before(async () => {
  // 190k completed (each with its attempt row), 5k failed, 4k queued, 1k running (a tenth
  // of them with expired leases); and a backlog: 30k due jobs in one more queue.
  await db.pool.query(`
    INSERT INTO jobs (queue, type, status, payload, attempt_count, started_at, finished_at)
    SELECT 'q' || (i % 5), 'demo.noop', 'completed', '{}', 1, now(), now() FROM generate_series(1, 190000) i;
    INSERT INTO jobs (queue, type, status, payload, attempt_count, started_at, finished_at, error)
    SELECT 'q' || (i % 5), 'demo.noop', 'failed', '{}', 3, now(), now(), 'boom' FROM generate_series(1, 5000) i;
    INSERT INTO jobs (queue, type, status, payload) SELECT 'q' || (i % 5), 'demo.noop', 'queued', '{}' FROM generate_series(1, 4000) i;
    INSERT INTO jobs (queue, type, status, payload, attempt_count, worker_id, heartbeat_at, lease_expires_at, started_at)
    SELECT 'q' || (i % 5), 'demo.noop', 'running', '{}', 1, 'w' || (i % 10), now(),
           now() + CASE WHEN i % 10 = 0 THEN interval '-1 minute' ELSE interval '1 minute' END, now()
      FROM generate_series(1, 1000) i;
    INSERT INTO jobs (queue, type, status, payload) SELECT '${BACKLOG}', 'demo.noop', 'queued', '{}' FROM generate_series(1, 30000) i;
    INSERT INTO jobs (queue, type, status, payload, run_at) SELECT '${STRANDED}', 'other.gone', 'queued', '{}', now() - interval '1 hour' FROM generate_series(1, 30000) i;
    INSERT INTO jobs (queue, type, status, payload) SELECT '${STRANDED}', 'demo.noop', 'queued', '{}' FROM generate_series(1, 100) i;
    -- attempt history for the completed jobs (an empty table is read whole, rightly)
    INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome)
    SELECT job_id, 1, 'w1', now(), now(), 'completed' FROM jobs WHERE status = 'completed';
    -- and the leases the failed jobs lost, first, to workers that died (the worker filter reads them)
    INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome)
    SELECT job_id, 1, 'w' || (job_id % 10), now(), now(), 'lease_lost' FROM jobs WHERE status = 'failed';
    ANALYZE jobs;
    ANALYZE ended_attempts;`);
  ids = (await db.pool.query(`SELECT job_id FROM jobs WHERE status = 'running' ORDER BY job_id LIMIT 100`)).rows.map((r) => String(r.job_id));
  // The last of the backlog, at a lower priority than the rest: its place in line counts them all.
  lastInBacklog = String((await db.pool.query(`UPDATE jobs SET priority = 1 WHERE job_id = (SELECT max(job_id) FROM jobs WHERE queue = '${BACKLOG}') RETURNING job_id`)).rows[0].job_id);
});

/**
 * The plan of a hot statement with these values. A custom plan is what the first executions
 * of a prepared statement get; the generic one is what PostgreSQL may switch to after five
 * (it then stays): a PREPAREd statement EXPLAINed through EXECUTE under plan_cache_mode
 * (EXPLAIN of the statement text itself would plan it with the values in, custom either way).
 */
async function plan(st: sql.Statement, values: unknown[], mode: 'force_custom_plan' | 'force_generic_plan'): Promise<string> {
  // A connection per plan, released here: held across tests, a run filtered by name kept it,
  // and the pool's end at exit waited for it for ever.
  const client = await db.pool.connect();
  try {
    return await planOn(client, st, values, mode);
  } finally {
    client.release();
  }
}

async function planOn(client: pg.PoolClient, st: sql.Statement, values: unknown[], mode: 'force_custom_plan' | 'force_generic_plan'): Promise<string> {
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL plan_cache_mode = ${mode}`);
    await client.query(`PREPARE plan_check AS ${st.text}`);
    // EXECUTE takes its arguments as literals (a utility statement binds no parameters).
    // (The arrays here are of ids: digits only.)
    const literal = (v: unknown) => (v === null ? 'NULL' : client.escapeLiteral(Array.isArray(v) ? `{${v.join(',')}}` : String(v)));
    const args = values.map(literal).join(', ');
    const { rows } = await client.query(`EXPLAIN (COSTS OFF) EXECUTE plan_check${args ? `(${args})` : ''}`);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  } finally {
    await client.query('ROLLBACK');
    // (PREPARE is not undone by the rollback; if it failed, there is nothing to drop and
    // the error worth seeing is the one already thrown.)
    await client.query('DEALLOCATE plan_check').catch(() => {});
  }
}

/** Of the plan nodes above the first line holding `node`, the nearest whose name is one of `names`. */
function nearest(plan: string, node: string, names: string[]): string | undefined {
  const lines = plan.split('\n');
  let at = lines.findIndex((l) => l.includes(node));
  const depth = (l: string) => l.search(/\S/);
  let d = depth(lines[at] ?? '');
  while (--at >= 0) {
    const l = lines[at]!;
    if (depth(l) >= d) continue;
    d = depth(l);
    const name = l.trim().replace(/^->\s*/, '');
    const found = names.find((n) => name.startsWith(n));
    if (found) return found;
  }
  return undefined;
}

const byId = (value: unknown) => JSON.stringify(Object.fromEntries(ids.map((id) => [id, value])));
const attempts = () => byId(1);
/** The types a worker has handlers for, as its claims pass them. */
const TYPES = ['demo.noop', 'demo.sleep', 'bench'];
const cases: [string, sql.Statement, () => unknown[], RegExp][] = [
  ['claim by id', sql.jobClaim, () => [ids, 'w', 30000, true, TYPES], /jobs_pkey/],
  ['claim fresh ids', sql.jobClaimFresh, () => [ids, 'w', 30000, TYPES], /jobs_pkey/],
  ['claim next due', sql.jobClaimNext, () => ['q1', 'w', 30000, 50, true], /jobs_claim_idx/],
  ['claim next due from a backlog', sql.jobClaimNext, () => [BACKLOG, 'w', 30000, 50, true], /jobs_claim_idx/],
  ['claim next due of handled types', sql.jobClaimNextOfTypes, () => ['q1', 'w', 30000, 50, true, TYPES], /jobs_claim_type_idx/],
  ['claim next due of handled types from a backlog', sql.jobClaimNextOfTypes, () => [BACKLOG, 'w', 30000, 50, true, TYPES], /jobs_claim_type_idx/],
  ['claim next due of handled types behind a backlog of others', sql.jobClaimNextOfTypes, () => [STRANDED, 'w', 30000, 50, true, TYPES], /jobs_claim_type_idx/],
  // The batch variant's claim size (prefetch 490 + C): a review saw a custom plan of an
  // earlier form (the candidates joined to jobs) read the queue's whole due range at this size.
  ['claim 500 due of handled types from a backlog', sql.jobClaimNextOfTypes, () => [BACKLOG, 'w', 30000, 500, true, TYPES], /jobs_claim_type_idx/],
  ['claim 500 due of handled types behind a backlog of others', sql.jobClaimNextOfTypes, () => [STRANDED, 'w', 30000, 500, true, TYPES], /jobs_claim_type_idx/],
  // A worker's claim over every queue it serves (the backstop poll, and all claims while Redis is away).
  ['claim due of handled types across queues', sql.jobClaimNextAcross(3), () => ['w', 30000, 50, true, TYPES, STRANDED, BACKLOG, 'q1'], /jobs_claim_type_idx/],
  ['claim 500 due of handled types across queues', sql.jobClaimNextAcross(3), () => ['w', 30000, 500, true, TYPES, BACKLOG, STRANDED, 'q1'], /jobs_claim_type_idx/],
  ['a worker\'s own running jobs', sql.jobsHeldBy, () => ['w1'], /jobs_running_idx/],
  ['take over expired leases', sql.jobClaimExpired, () => ['q1', 'w', 30000, 1, true, TYPES], /jobs_running_idx/],
  ['claim under a queue limit', sql.jobClaimControlled, () => ['q1', 'w', 30000, 50, true], /jobs_claim_idx/],
  ['claim under a queue limit from a backlog', sql.jobClaimControlled, () => [BACKLOG, 'w', 30000, 50, true], /jobs_claim_idx/],
  ['claim of handled types under a queue limit behind a backlog of others', sql.jobClaimControlledOfTypes, () => [STRANDED, 'w', 30000, 50, true, TYPES], /jobs_claim_type_idx/],
  ['heartbeat', sql.jobHeartbeat, () => [ids, attempts(), 'w1', 30000], /jobs_(pkey|running_idx)/],
  ['complete', sql.jobComplete, () => [ids, attempts(), '{}', 'w1'], /jobs_(pkey|running_idx)/],
  ['fail', sql.jobFail, () => [ids, attempts(), byId('e'), '{}', byId(false), byId(0), 'w1', byId(false)], /jobs_(pkey|running_idx)/],
  ['recover expired leases', sql.jobRecoverExpired, () => [500, null], /jobs_running_idx/],
  ['due jobs waiting for a signal', sql.jobDueWaiting, () => ['q1', 1000, 1000], /jobs_claim_idx/],
  ['due jobs waiting for a signal in a backlog', sql.jobDueWaiting, () => [BACKLOG, 1000, 1000], /jobs_claim_idx/],
  ['due jobs of handled types waiting for a signal behind a backlog of others', sql.jobDueWaitingOfTypes, () => [STRANDED, 1000, 1000, TYPES], /jobs_claim_type_idx/],
  ['queues with due jobs', sql.jobDueQueues, () => [], /jobs_claim_idx/],
  ['a due waiting job\'s place in line (the job page)', sql.jobsAhead, () => [lastInBacklog, 10_000], /jobs_claim_idx/],
  ['delete finished jobs (an operator\'s)', sql.jobDelete, () => [ids, null], /jobs_pkey/],
  ['delete finished jobs as a filter saw them', sql.jobDelete, () => [ids, byId('failed:1')], /jobs_pkey/],
  ['requeue jobs as a filter saw them', sql.jobRequeue, () => [ids, false, byId('failed:1')], /jobs_pkey/],
  ['the unfinished jobs holding singleton keys (an enqueue\'s conflict)', sql.jobIdsBySingletonKey, () => [['k1', 'k2']], /jobs_singleton_key_idx/],
  ['a refused action\'s jobs as they stand, with the holders of their singleton keys', sql.jobCurrent, () => [ids], /jobs_singleton_key_idx/],
  ['cancel jobs as a filter saw them', sql.jobCancel, () => [ids, byId('queued:0')], /jobs_pkey/],
  ['attempts of deleted jobs', sql.attemptsOfDeletedJobs, () => [ids], /ended_attempts_pkey/],
  ['a job\'s attempts, the one in progress included (the job_attempts view)', { name: 'attempts_of_job', text: ATTEMPTS_OF_JOB_SQL }, () => [ids[0]], /ended_attempts_pkey[\s\S]*jobs_pkey/],
  ['retention: finished jobs of a range of ids past their window', sql.jobPrune, () => [0, 5000, 7 * 86_400_000, null, 7 * 86_400_000, 7 * 86_400_000], /jobs_pkey/],
];

for (const [what, st, values, index] of cases) {
  for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
    test(`${what}: ${mode === 'force_custom_plan' ? 'custom' : 'generic'} plan uses ${index.source} and never scans jobs sequentially`, async () => {
      const p = await plan(st, values(), mode);
      assert.doesNotMatch(p, /Seq Scan on (jobs|ended_attempts)\b/, p);
      assert.match(p, index, p);
      const queues = st.name.startsWith('leasehold_job_claim_next_across') ? values().slice(5) : [values()[0]]; // a queue, or the queues of a claim across them
      if (/^jobs_claim(_type)?_idx$/.test(index.source) && (queues.includes(BACKLOG) || queues.includes(STRANDED))) {
        // One range of the index per priority level (and type), read in order and cut at the
        // limit: a sort above them orders at most limit × ranges rows, never a backlog. The
        // levels are either arms of their own (levelByLevel: priority = 0 … 9) or rows of
        // generate_series joined to the range (LEVELS_SQL: priority = l.level).
        const byType = index.source === 'jobs_claim_type_idx' ? ' AND \\(type = [^\\n]*' : ' AND ';
        const range = (level: string) => new RegExp(`Index Scan using ${index.source} on jobs( \\w+)?\\n\\s*Index Cond: \\(\\(queue = [^\\n]*${byType}\\(priority = ${level}\\)`);
        if (range('l\\.level').test(p)) assert.match(p, /Function Scan on generate_series l\b/, `every level has its range:\n${p}`);
        else {
          assert.match(p, range('0'), p);
          assert.match(p, new RegExp(`Index Cond: [^\\n]*\\(priority = 9\\)`), `every level has its range:\n${p}`);
        }
        // Nor is the queue's untyped range read for handled types: it would read past every
        // job of another type (the generic plan of a semi-join on the candidates once did).
        if (index.source === 'jobs_claim_type_idx') assert.doesNotMatch(p, /jobs_claim_idx/, p);
        assert.equal(nearest(p, `Index Scan using ${index.source}`, ['Limit', 'Nested Loop', 'Sort']), 'Limit', `a range is not cut at the limit:\n${p}`);
        if (index.source === 'jobs_claim_idx') assert.doesNotMatch(p, /Sort Key: jobs(_\d+)?\./, `sorts the backlog instead of reading it in order:\n${p}`);
      }
      if (mode === 'force_generic_plan' && st.text.includes('$1')) assert.match(p, /\$\d+\b/, `not a generic plan (no parameter in it):\n${p}`);
      // A per-row input (a JSON object keyed by job id) is bound as jsonb, parsed once: cast
      // from text in a row's filter it would be parsed again for every row, and a batch of
      // n rows cost n parses of n keys (100 ms for 500 rows instead of 2).
      const perRow = p.split('\n').filter((l) => /Filter:|Cond:/.test(l) && /\(\$\d+\)::jsonb/.test(l));
      assert.deepEqual(perRow, [], p);
    });
  }
}

/**
 * The console's reads on the same table, with their real parameters: the overview's stats
 * (completed rows are in no index by status: past the cap they are estimated, never counted by a scan)
 * and lists filtered by a status no partial index holds. scripts/explain-console.ts runs
 * the full set on a million rows.
 */
test('the console and /api/metrics: the stats and lists by completed status never scan jobs sequentially', async () => {
  const seen: { text: string; values: unknown[] }[] = [];
  const recorder: Executor = {
    query: ((text: unknown, values?: unknown[]) => {
      const q = typeof text === 'string' ? { text, values: values ?? [] } : (text as { text: string; values?: unknown[] });
      seen.push({ text: q.text, values: q.values ?? [] });
      return db.pool.query(q.text, q.values ?? []);
    }) as Executor['query'],
  };
  const head = (await db.pool.query(`SELECT max(job_id)::text AS max FROM jobs`)).rows[0].max as string;
  const stats = await computeConsoleStats(recorder, { leaseMs: 30_000 });
  assert.equal(stats.kinds.completed, 'estimate', 'completed rows past the cap are estimated');
  assert.ok(Math.abs(stats.counts.completed - 190_000) < 20_000, `about 190,000 completed (${stats.counts.completed})`);
  assert.equal(stats.counts.failed, 5000, 'the statuses an index holds are counted');
  // The Prometheus job counts read the same way (they once grouped the whole table).
  const metrics = await createMetricsSource({ db: recorder, doorbell: new PgDoorbell(db.pool, createLogger()), leaseMs: 30_000 }).stats();
  assert.equal(metrics.queues.find((q) => q.queue === 'q3')?.counts.failed, 1000);
  await listJobs(recorder, { status: 'completed', queue: 'q1', type: 'demo.noop', limit: 50 });
  await listJobs(recorder, { status: 'completed', cursor: String(Math.floor(Number(head) / 2)), limit: 50 });
  const running = await listJobs(recorder, { status: 'running', queue: 'q2', limit: 50 });
  // A worker's jobs: those it ran last, and those it lost (read from ended_attempts_lost_idx).
  await listJobs(recorder, { worker: 'w1', limit: 50 });
  // The failed list, in the order jobs failed (jobs_failed_idx): a first page and a later one.
  const failed = await listJobs(recorder, { status: 'failed', queue: 'q3', limit: 50 });
  await listJobs(recorder, { status: 'failed', cursor: failed.nextCursor!, limit: 50 });
  // The dead letter's groups (the latest failures) and the overview's dead-letter series.
  await deadLetterGroups(recorder);
  await readDeadLettered(recorder, 10_000, 3_600_000, Date.now());
  // The Job types' lost leases: over the 5,000 lost here (a week's window), and over a window
  // with none (the last 15 minutes of a healthy day), read from ended_attempts_lost_at_idx.
  assert.equal([...(await readLostLeases(recorder, new Date(Date.now() - 7 * 86_400_000), new Date(Date.now() + 60_000))).values()].reduce((n, k) => n + k.n, 0), 5000);
  await readLostLeases(recorder, new Date(Date.now() + 60_000), new Date(Date.now() + 960_000));
  // And the failure chart's lease-lost line, per bucket of the last hour.
  await readLeasesLost(recorder, 10_000, 3_600_000, Date.now());
  const lostReads = seen.filter((st) => /outcome = 'lease_lost' AND (a\.)?finished_at/.test(st.text));
  assert.equal(lostReads.length, 3);
  for (const st of lostReads) {
    const p = (await db.pool.query(`EXPLAIN (COSTS OFF) ${st.text}`, st.values)).rows.map((r) => r['QUERY PLAN']).join('\n');
    assert.match(p, /ended_attempts_lost_(at_)?idx/, `${st.text}\n${p}`);
  }
  // Every read of failed rows in their order (a page, a window of a filtered page) walks jobs_failed_idx.
  // (Of jobs: the lease-lost series reads ended_attempts in that order, checked below.)
  const inFailureOrder = seen.filter((st) => /ORDER BY finished_at DESC/.test(st.text) && /FROM jobs\b/.test(st.text));
  assert.ok(inFailureOrder.length >= 4, 'both lists, the groups and the series read in the order of failure');
  for (const st of inFailureOrder) {
    const failedPlan = (await db.pool.query(`EXPLAIN (COSTS OFF) ${st.text}`, st.values)).rows.map((r) => r['QUERY PLAN']).join('\n');
    assert.match(failedPlan, st.text.includes('job_id = ANY') ? /jobs_pkey|jobs_status_idx|jobs_failed_idx/ : /jobs_failed_idx/, `${st.text}\n${failedPlan}`);
  }
  // Its "N new" anchor and count read the failures of the last seconds from jobs_failed_idx,
  // not every failed row of the queue.
  await countNewer(recorder, { status: 'failed', queue: 'q3' }, failed.newerAfter!);
  // The running list's counts the jobs started since its read (jobs_running_idx, checked below with the rest).
  await countNewer(recorder, { status: 'running', queue: 'q2' }, running.newerAfter!);
  const sinceAnchor = seen.filter((st) => /AS seen|\(finished_at, job_id\) >/.test(st.text));
  assert.equal(sinceAnchor.length, 3, 'two anchors read, one count');
  for (const st of sinceAnchor) {
    const p = (await db.pool.query(`EXPLAIN (COSTS OFF) ${st.text}`, st.values)).rows.map((r) => r['QUERY PLAN']).join('\n');
    assert.match(p, /(Index (Only )?Scan using|Bitmap Index Scan on) jobs_failed_idx/, `${st.text}\n${p}`);
  }
  const jobsStatements = seen.filter((s) => /\bjobs\b/.test(s.text));
  assert.ok(jobsStatements.length >= 5, 'statements were recorded');
  for (const s of jobsStatements) {
    const { rows } = await db.pool.query(`EXPLAIN (COSTS OFF) ${s.text}`, s.values);
    const p = rows.map((r) => r['QUERY PLAN']).join('\n');
    assert.doesNotMatch(p, /Seq Scan on (jobs|ended_attempts)/, `${s.text}\n${p}`);
  }
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** The rows a statement read from jobs (returned by a scan of it, or read there and filtered out), and its scans of jobs. */
async function jobsRowsRead(text: string, values: unknown[]): Promise<{ rows: number; scans: string[] }> {
  const { rows } = await db.pool.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
  let read = 0;
  const scans: string[] = [];
  const walk = (n: PlanNode) => {
    if (n['Relation Name'] === 'jobs') {
      const perLoop = n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0);
      read += perLoop * n['Actual Loops'];
      scans.push(`${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}: ${perLoop * n['Actual Loops']} rows`);
    }
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(rows[0]['QUERY PLAN'][0].Plan);
  return { rows: read, scans };
}

/**
 * The list filtered by a time window (createdSince, finishedSince) that few jobs match: the
 * windows of ids it reads must stop near the jobs the window holds, not go on down the whole
 * table (260,000 rows here, a million in scripts/explain-console.ts) because a page of 50 was
 * not filled. The table is the one above with a stretch of processed jobs on top (completed
 * before the window opened: what bounds an "enqueued since" window, see read.ts createdFloor)
 * and then the window's twenty.
 */
test('the list by a time window that few jobs match reads about the rows it matches, not the table', async () => {
  const processed = await db.pool.query(`
    INSERT INTO jobs (queue, type, status, payload, attempt_count, started_at, finished_at)
    SELECT 'q' || (i % 5), 'demo.noop', 'completed', '{}', 1, now(), now() FROM generate_series(1, 1000) i
    RETURNING finished_at`);
  const doneAt = processed.rows[0].finished_at as Date;
  // A moment to the millisecond (as the API takes one) after every job above was enqueued and finished.
  await waitFor('the database clock a millisecond past them', async () => (await db.pool.query(`SELECT now() >= $1::timestamptz + interval '1 ms' AS past`, [doneAt])).rows[0].past);
  const recent = await db.pool.query(`
    INSERT INTO jobs (queue, type, status, payload, attempt_count, started_at, finished_at)
    SELECT 'recent', 'demo.noop', s::job_status, '{}', CASE WHEN s = 'completed' THEN 1 ELSE 0 END,
           CASE WHEN s = 'completed' THEN now() END, CASE WHEN s = 'completed' THEN now() END
      FROM generate_series(1, 20) i, LATERAL (SELECT CASE WHEN i % 2 = 0 THEN 'completed' ELSE 'queued' END AS s) t
    RETURNING job_id::text AS id, status, to_char(date_trunc('milliseconds', created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS since`);
  const since = recent.rows[0].since as string;
  const newest = (rows: { id: string; status: string }[]) => rows.map((r) => r.id).sort((a, b) => Number(b) - Number(a));
  const all = newest(recent.rows);
  const completed = newest(recent.rows.filter((r) => r.status === 'completed'));
  const queued = newest(recent.rows.filter((r) => r.status === 'queued'));
  const cases: [Omit<Parameters<typeof listJobs>[1], 'limit'>, string[]][] = [
    [{ createdSince: since }, all],
    [{ createdSince: since, status: 'completed' }, completed],
    [{ createdSince: since, status: 'queued', queue: 'recent' }, queued],
    [{ createdSince: since, queue: 'recent', type: 'demo.noop' }, all],
    [{ finishedSince: since }, completed],
    [{ finishedSince: since, status: 'completed' }, completed],
    [{ finishedSince: since, queue: 'recent' }, completed],
    [{ createdSince: since, finishedSince: since }, completed],
  ];
  const problems: string[] = [];
  for (const [filter, expected] of cases) {
    const seen: { text: string; values: unknown[] }[] = [];
    const recorder: Executor = {
      query: ((text: string, values?: unknown[]) => {
        seen.push({ text, values: values ?? [] });
        return db.pool.query(text, values ?? []);
      }) as Executor['query'],
    };
    const page = await listJobs(recorder, { ...filter, limit: 50 });
    assert.deepEqual(page.jobs.map((j) => j.id), expected, JSON.stringify(filter));
    assert.equal(page.nextCursor, null, `${JSON.stringify(filter)}: no job below the page can match`);
    let read = 0;
    const scans: string[] = [];
    for (const s of seen.filter((st) => /\bjobs\b/.test(st.text))) {
      const r = await jobsRowsRead(s.text, s.values);
      read += r.rows;
      scans.push(...r.scans);
      if (r.scans.some((x) => x.startsWith('Seq Scan'))) problems.push(`${JSON.stringify(filter)}: a sequential scan of jobs\n${s.text}\n${r.scans.join('\n')}`);
    }
    // Every case matches at most 20 jobs: a thousand rows read is already far more than it takes.
    if (read > 1_000) problems.push(`${JSON.stringify(filter)}: ${read} rows of jobs read for ${expected.length} matches:\n  ${scans.join('\n  ')}`);
  }
  assert.equal(problems.length, 0, problems.join('\n'));
});

test('the plans are checked against a table where a sequential scan would be chosen if it could', async () => {
  const p = await plan({ name: 'count_all', text: `SELECT count(*) FROM jobs WHERE payload = '{}'` }, [], 'force_custom_plan');
  assert.match(p, /Seq Scan on jobs/, 'the detector sees a sequential scan when there is one');
});

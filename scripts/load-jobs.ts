/**
 * Loads a large, realistic job table for measuring the console (README "Console").
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/lh_big node --import tsx scripts/load-jobs.ts [--rows 1000000] [--create]
 *   ... --rows 10000000      (ten million; loaded in chunks of a million rows, one transaction each)
 *
 * Rows are generated inside PostgreSQL (INSERT … SELECT … FROM generate_series), never
 * one by one: a million rows load in well under a minute on 2 cores. The mix, by id:
 *   completed ≈ 86 %, failed ≈ 5 % (five error families, several types), cancelled ≈ 2 %,
 *   queued ≈ 5 % (a fifth of them scheduled in the future), retrying ≈ 1.5 %,
 *   running ≈ 0.5 % (half with an expired lease held by a dead worker),
 * over 8 queues and 8 types, created over the last 7 days in id order, payloads with a
 * few keys (`account`, `region`, `ms`, nested `order.id`). Failed and retrying jobs get
 * their attempt rows. The script migrates first (so an empty database works), loads,
 * then runs VACUUM ANALYZE so the planner and the console's estimates see the table.
 *
 * Writes rows directly (a test-data tool, like test/factories.ts): it never runs against
 * a database a worker serves unless you mean it. --create creates the database first.
 */
import pg from 'pg';
import { runMigrations } from '../lib/db/migrate';
import { flag, numberOption } from './cli-args';

const rows = numberOption('rows', 1_000_000);
const chunk = numberOption('chunk', 1_000_000);
const url = process.env.DATABASE_URL;
if (!url) {
  console.error('set DATABASE_URL to the database to load (it is migrated first)');
  process.exit(2);
}
if (!Number.isInteger(rows) || rows < 1 || rows > 100_000_000) {
  console.error('--rows must be an integer between 1 and 100000000');
  process.exit(2);
}

if (flag('create')) {
  const u = new URL(url);
  const db = u.pathname.slice(1);
  u.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: u.toString() });
  await admin.connect();
  const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [db]);
  if (!exists.rowCount) await admin.query(`CREATE DATABASE "${db.replace(/"/g, '""')}"`);
  await admin.end();
}

await runMigrations(url);
const client = new pg.Client({ connectionString: url, application_name: 'leasehold:load-jobs' });
await client.connect();
const t0 = performance.now();
const { rows: base } = await client.query(`SELECT coalesce(max(job_id), 0)::bigint AS max FROM jobs`);
const offset = Number(base[0].max);

// g: the row number in this load (1..rows); status chosen by g mod 200 so every id range has the mix.
const insert = `
INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, worker_id,
                  heartbeat_at, lease_expires_at, run_at, cancel_requested_at, error, created_at, started_at, finished_at)
SELECT queue, type, status::job_status, payload, attempts, 3, 3,
       CASE WHEN status <> 'queued' THEN 'load-host:' || (1000 + g % 7) || ':dead' END,
       CASE WHEN status <> 'queued' THEN created + interval '2 s' END,
       CASE WHEN status = 'running' THEN CASE WHEN g % 2 = 0 THEN now() - interval '5 min' ELSE now() + interval '1 hour' END END,
       CASE WHEN status = 'queued' AND g % 5 = 0 THEN now() + interval '1 day'
            WHEN status = 'retrying' THEN now() + (g % 600) * interval '1 s'
            ELSE created END,
       CASE WHEN status = 'cancelled' THEN created + interval '1 s' END,
       CASE WHEN status IN ('failed', 'retrying') THEN
         CASE g % 5
           WHEN 0 THEN 'SMTP 421: mailbox busy for user' || g || '@example.com, try again later'
           WHEN 1 THEN 'timeout after 30000 ms calling https://api.example.com/v1/charges/ch_' || md5(g::text)
           WHEN 2 THEN 'TypeError: Cannot read properties of undefined (reading ''total'')'
           WHEN 3 THEN 'lease expired: worker load-host:' || (1000 + g % 7) || ':dead stopped renewing (crash, stall or partition)'
           ELSE 'demo.sleep: failing attempt 3 of the first 5 on purpose'
         END END,
       created,
       CASE WHEN status <> 'queued' THEN created + interval '2 s' END,
       CASE WHEN status IN ('completed', 'failed', 'cancelled') THEN created + interval '2 s' + (g % 5000) * interval '1 ms' END
  FROM (
    SELECT g,
           (ARRAY['default','default','default','emails','reports','billing','webhooks','images','exports','search'])[1 + g % 10] AS queue,
           (ARRAY['demo.sleep','demo.noop','email.send','report.build','charge.capture','webhook.deliver','image.resize','export.csv'])[1 + (g / 10) % 8] AS type,
           CASE WHEN g % 200 < 172 THEN 'completed'
                WHEN g % 200 < 182 THEN 'failed'
                WHEN g % 200 < 186 THEN 'cancelled'
                WHEN g % 200 < 196 THEN 'queued'
                WHEN g % 200 < 199 THEN 'retrying'
                ELSE 'running' END AS status,
           jsonb_build_object('account', g % 5000, 'region', (ARRAY['eu','us','ap'])[1 + g % 3], 'ms', g % 1000,
                              'order', jsonb_build_object('id', 'ord_' || g)) AS payload,
           CASE WHEN g % 200 < 172 THEN 1 WHEN g % 200 < 182 THEN 3 WHEN g % 200 < 186 THEN 0
                WHEN g % 200 < 196 THEN 0 WHEN g % 200 < 199 THEN 1 + g % 2 ELSE 1 END AS attempts,
           now() - ($3::bigint - g) * (interval '7 days' / $3::bigint) AS created
      FROM generate_series($1::bigint, $2::bigint) AS g
  ) s`;

// Attempt rows for the jobs whose history an operator looks at (failed and retrying).
const attempts = `
INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, heartbeat_at, finished_at, outcome, error, error_stack)
SELECT j.job_id, a, j.worker_id, j.created_at + a * interval '1 s', j.created_at + a * interval '1 s',
       j.created_at + a * interval '1 s' + interval '300 ms',
       CASE WHEN j.status = 'failed' AND a = j.attempt_count THEN 'failed'::attempt_outcome ELSE 'retried'::attempt_outcome END,
       j.error, 'Error: ' || j.error || E'\n    at handler (worker/handlers/' || j.type || '.ts:42:11)\n    at Runner.run (worker/runner.ts:301:7)'
  FROM jobs j, generate_series(1, j.attempt_count) AS a
 WHERE j.job_id > $1 AND j.job_id <= $2 AND j.status IN ('failed', 'retrying')`;

for (let from = 1; from <= rows; from += chunk) {
  const to = Math.min(rows, from + chunk - 1);
  const t = performance.now();
  await client.query('BEGIN');
  const before = Number((await client.query(`SELECT coalesce(max(job_id), 0)::bigint AS max FROM jobs`)).rows[0].max);
  await client.query(insert, [from, to, rows]);
  const after = Number((await client.query(`SELECT coalesce(max(job_id), 0)::bigint AS max FROM jobs`)).rows[0].max);
  await client.query(attempts, [before, after]);
  await client.query('COMMIT');
  console.log(`rows ${from + offset}…${to + offset}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
}
const tv = performance.now();
await client.query('VACUUM (ANALYZE) jobs');
await client.query('VACUUM (ANALYZE) ended_attempts');
console.log(`VACUUM ANALYZE: ${((performance.now() - tv) / 1000).toFixed(1)} s`);
const { rows: counts } = await client.query(`SELECT status, count(*)::bigint AS n FROM jobs GROUP BY 1 ORDER BY 1`);
console.log(counts.map((r) => `${r.status} ${Number(r.n).toLocaleString('en')}`).join(', '));
console.log(`loaded ${rows.toLocaleString('en')} jobs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
await client.end();

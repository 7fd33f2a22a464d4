/**
 * PostgreSQL's own cost of a job, without workers, Redis or a second process: N queued jobs
 * claimed by id and completed in batches of B on one connection (the statements a worker
 * sends: ops.jobClaim, ops.jobComplete), timed, with the WAL they wrote.
 *
 *   createdb -h 127.0.0.1 -U postgres lh_loop
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/lh_loop node --import tsx scripts/claim-complete-loop.ts [N=20000 B=500]
 *
 * Empties the jobs table first: run it on a database made for it.
 */
import pg from 'pg';
import { runMigrations } from '../lib/db/migrate';
import * as ops from '../lib/queue/ops';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('set DATABASE_URL (a database made for this: the jobs table is emptied)');
const N = Number(process.env.N ?? 20_000);
const B = Number(process.env.B ?? 500);
await runMigrations(url);
const pool = new pg.Pool({ connectionString: url, max: 1 });
await pool.query('TRUNCATE jobs, ended_attempts');
await pool.query(`INSERT INTO jobs (type, queue, payload) SELECT 'bench', 'bench', jsonb_build_object('i', g) FROM generate_series(1, $1::int) g`, [N]);
await pool.query('VACUUM ANALYZE jobs');
await pool.query('CHECKPOINT'); // every run starts with the same full-page writes ahead
const ids = (await pool.query('SELECT job_id::text AS id FROM jobs ORDER BY job_id')).rows.map((r) => r.id as string);
const lsn = async () => (await pool.query('SELECT pg_current_wal_insert_lsn() AS l')).rows[0].l as string;
const from = await lsn();
let claimMs = 0;
let completeMs = 0;
const t0 = performance.now();
for (let k = 0; k < ids.length; k += B) {
  const a = performance.now();
  const jobs = await ops.jobClaim(pool, { ids: ids.slice(k, k + B), workerId: 'loop', leaseMs: 30_000, types: ['bench'] });
  const b = performance.now();
  await ops.jobComplete(pool, { workerId: 'loop', items: jobs.map((j) => ({ jobId: j.id, attempt: j.attemptCount })) });
  claimMs += b - a;
  completeMs += performance.now() - b;
}
const ms = performance.now() - t0;
const wal = Number((await pool.query('SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1) AS b', [from])).rows[0].b);
const done = (await pool.query(`SELECT count(*)::int AS n FROM jobs WHERE status = 'completed'`)).rows[0].n;
console.log(JSON.stringify({
  jobs: N,
  batch: B,
  completed: done,
  jobsPerSecond: Math.round((N / ms) * 1000),
  claimUsPerJob: +((claimMs * 1000) / N).toFixed(1),
  completeUsPerJob: +((completeMs * 1000) / N).toFixed(1),
  walBytesPerJob: Math.round(wal / N),
}));
await pool.end();

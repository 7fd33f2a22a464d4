/**
 * Runs the console's read models against a (large) database with a recording executor,
 * then EXPLAINs every statement they sent with its real parameters, and fails if any plan
 * reads the jobs table with a sequential scan.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/lh_big node --import tsx scripts/explain-console.ts
 */
import pg from 'pg';
import type { Executor } from '../lib/db/client';
import { previewAction } from '../lib/queue/bulk';
import { computeConsoleStats } from '../lib/queue/console-stats';
import { deadLetterGroups } from '../lib/queue/dead-letter';
import { countNewer, getJob, jobsByIds, listJobs, listWorkers } from '../lib/queue/read';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('set DATABASE_URL');
const pool = new pg.Pool({ connectionString: url, max: 4 });
const seen: { what: string; text: string; values: unknown[] }[] = [];
let current = '';
const recorder: Executor = {
  query: ((text: unknown, values?: unknown[]) => {
    const q = typeof text === 'string' ? { text, values: values ?? [] } : (text as { text: string; values?: unknown[] });
    seen.push({ what: current, text: q.text, values: q.values ?? [] });
    return pool.query(q.text, q.values ?? []);
  }) as Executor['query'],
};

const head = (await pool.query('SELECT max(job_id)::text AS max FROM jobs')).rows[0].max as string;
const groups = await deadLetterGroups(pool);
// Time windows that few jobs match: the newest 20 s of the loaded jobs' enqueues and finishes.
const { rows: [newest] } = await pool.query(`SELECT max(created_at) AS created, max(finished_at) AS finished FROM jobs`);
const before = (t: Date, s: number) => new Date(t.getTime() - s * 1000).toISOString();
const createdFew = before(newest.created, 20);
const finishedFew = before(newest.finished, 20);
const g = groups.groups[0];
const cases: [string, () => Promise<unknown>][] = [
  ['stats', () => computeConsoleStats(recorder, { leaseMs: 30_000 })],
  ['list: newest', () => listJobs(recorder, { limit: 50 })],
  ['list: status=failed', () => listJobs(recorder, { status: 'failed', limit: 50 })],
  ['list: status=completed, deep cursor', () => listJobs(recorder, { status: 'completed', cursor: String(Math.floor(Number(head) / 2)), limit: 50 })],
  ['list: queue=emails', () => listJobs(recorder, { queue: 'emails', limit: 50 })],
  ['list: status=completed&queue=emails&type=email.send', () => listJobs(recorder, { status: 'completed', queue: 'emails', type: 'email.send', limit: 50 })],
  ['list: error=timeout', () => listJobs(recorder, { error: 'timeout', limit: 50 })],
  ['list: payload account=42', () => listJobs(recorder, { payload: 'account=42', limit: 50 })],
  ['list: worker (running)', () => listJobs(recorder, { status: 'running', worker: 'load-host:1001:dead', limit: 50 })],
  ['list: dead-letter group', () => listJobs(recorder, { status: 'failed', type: g?.type, fingerprint: g?.fingerprint, limit: 50 })],
  ['list: createdSince (few match)', () => listJobs(recorder, { createdSince: createdFew, limit: 50 })],
  ['list: queue=emails&createdSince (few match)', () => listJobs(recorder, { queue: 'emails', createdSince: createdFew, limit: 50 })],
  ['list: createdSince=24h', () => listJobs(recorder, { createdSince: '24h', limit: 50 })],
  ['list: finishedSince (few match)', () => listJobs(recorder, { finishedSince: finishedFew, limit: 50 })],
  ['list: status=completed&finishedSince (few match)', () => listJobs(recorder, { status: 'completed', finishedSince: finishedFew, limit: 50 })],
  ['list: status=completed&finishedSince=24h', () => listJobs(recorder, { status: 'completed', finishedSince: '24h', limit: 50 })],
  ['newer', () => countNewer(recorder, { status: 'queued' }, String(Number(head) - 1000))],
  ['lookup', () => jobsByIds(recorder, [head, String(Number(head) - 1)])],
  ['detail', () => getJob(recorder, head)],
  ['workers', () => listWorkers(recorder)],
  ['dead letter groups', () => deadLetterGroups(recorder)],
  ['preview: requeue a dead-letter group', () => previewAction(recorder, 'requeue', { filter: { status: 'failed', type: g?.type, fingerprint: g?.fingerprint } }, {}, {})],
];
for (const [what, fn] of cases) {
  current = what;
  await fn();
}

interface Plan {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: Plan[];
}
const walk = (p: Plan, out: Plan[] = []) => {
  out.push(p);
  for (const c of p.Plans ?? []) walk(c, out);
  return out;
};
let bad = 0;
const byCase = new Map<string, string[]>();
for (const s of seen) {
  if (!/\bjobs\b/.test(s.text)) continue;
  const { rows } = await pool.query(`EXPLAIN (FORMAT JSON) ${s.text}`, s.values);
  const nodes = walk(rows[0]['QUERY PLAN'][0].Plan);
  const seq = nodes.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'jobs');
  const scans = [...new Set(nodes.filter((n) => n['Relation Name'] === 'jobs').map((n) => `${n['Node Type']}${(n as { 'Index Name'?: string })['Index Name'] ? ` (${(n as { 'Index Name'?: string })['Index Name']})` : ''}`))];
  if (!byCase.has(s.what)) byCase.set(s.what, []);
  byCase.get(s.what)!.push(...scans);
  if (seq.length) {
    bad++;
    console.log(`SEQ SCAN in "${s.what}":\n${s.text}\n`);
  }
}
for (const [what, scans] of byCase) console.log(`${what.padEnd(52)} ${[...new Set(scans)].join(', ')}`);
console.log(bad ? `${bad} statement(s) scan jobs sequentially` : `no statement scans jobs sequentially (${seen.length} statements)`);
await pool.end();
process.exit(bad ? 1 : 0);

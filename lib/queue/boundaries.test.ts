/**
 * The architecture, made executable: only lib/queue/statements/ writes job state, and
 * only lib/queue/ops/ runs those statements. The worker, the API, the console and the
 * CLI all go through ops.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PRODUCTION = ['app', 'components', 'lib', 'worker', 'bin', 'bench'];

function sources(dir: string): string[] {
  const abs = path.join(root, dir);
  if (!fs.existsSync(abs)) return [];
  return fs.readdirSync(abs, { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name.startsWith('.') ? [] : sources(rel);
    return /\.(ts|tsx|mts|mjs|js)$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) ? [rel] : [];
  });
}

const WRITES_JOB_STATE = [
  /\b(UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+"?(jobs|ended_attempts|job_attempts)"?\b/i,
  /\.(update|insert|delete)\(\s*(jobs|endedAttempts)\s*\)/, // drizzle's builder
  /\bTRUNCATE\b[^;]*\b(jobs|ended_attempts)\b/i,
];

const STATEMENTS = path.join('lib', 'queue', 'statements');
const OPS = path.join('lib', 'queue', 'ops');
const under = (dir: string) => (f: string) => f.startsWith(dir + path.sep);

test('no production file outside lib/queue/statements/ writes the jobs or ended_attempts tables (or the job_attempts view)', () => {
  const files = PRODUCTION.flatMap(sources);
  assert.ok(files.length > 20, 'the scan finds the sources');
  assert.ok(files.filter(under(STATEMENTS)).length >= 5, 'the scan finds the statements');
  const offenders = files
    .filter((f) => !under(STATEMENTS)(f))
    .filter((f) => WRITES_JOB_STATE.some((re) => re.test(fs.readFileSync(path.join(root, f), 'utf8'))));
  assert.deepEqual(offenders, []);
});

test('the scan would catch a write (it is not vacuous)', () => {
  const sample = 'await db.query(`UPDATE jobs SET status = $1`)';
  assert.ok(WRITES_JOB_STATE.some((re) => re.test(sample)));
  assert.ok(WRITES_JOB_STATE.some((re) => re.test('db.update(jobs).set({})')));
});

test('only lib/queue/ops/ imports the statements', () => {
  const importers = PRODUCTION.flatMap(sources)
    .filter((f) => !under(STATEMENTS)(f))
    .filter((f) => /from\s+['"][^'"]*\/statements(\/[^'"]*)?['"]/.test(fs.readFileSync(path.join(root, f), 'utf8')));
  assert.ok(importers.length >= 5, 'the scan finds the ops that run statements');
  assert.deepEqual(importers.filter((f) => !under(OPS)(f)), []);
});

test('lease SQL never binds a timestamp from the worker clock', async () => {
  const text = fs
    .readdirSync(path.join(root, STATEMENTS))
    .map((f) => fs.readFileSync(path.join(root, STATEMENTS, f), 'utf8'))
    .join('\n');
  // Every lease deadline, in the SQL as sent, is the database's clock (now(), or for a claim
  // that waited for a lock statement_timestamp()) plus a duration, or none.
  const sql = await import('./statements');
  // Statements built per call too (one per number of queues): a few of each.
  const built = [1, 2, 3].map((n) => sql.jobClaimNextAcross(n));
  const rendered = [...Object.values(sql), ...built]
    .filter((v): v is { name: string; text: string } => typeof v === 'object' && v !== null && 'text' in v)
    .map((st) => st.text)
    .join('\n');
  const leaseAssignments = rendered.match(/lease_expires_at\s*=\s*[^,\n]+/g) ?? [];
  assert.ok(leaseAssignments.length >= 3);
  for (const a of leaseAssignments) assert.match(a, /lease_expires_at\s*=\s*(now\(\)|statement_timestamp\(\)|NULL)/, a);
  // ...and is never compared with a value the client binds.
  assert.deepEqual(rendered.match(/lease_expires_at\s*(<|>|<=|>=|=)\s*\$\d/g) ?? [], []);
  // The only timestamps a client binds are a chosen run_at: a producer's at enqueue (arrays
  // in jobEnqueue, one value in jobEnqueueOne) and an operator's in jobReschedule, each only
  // as run_at's value and never earlier than the database's now().
  const statements = text.split(/export const (?=\w+: Statement)/).slice(1);
  assert.ok(statements.length >= 10);
  for (const st of statements) {
    const name = st.slice(0, st.indexOf(':'));
    const bare = st.match(/\$\d+::timestamptz(?!\[)/g) ?? [];
    if (name === 'jobEnqueueOne') {
      assert.deepEqual(bare, ['$5::timestamptz']);
      // and never earlier than the database's now(): a runAt in the past is due from the enqueue
      assert.match(st, /GREATEST\(\$5::timestamptz, now\(\)\)/);
    } else if (name === 'jobReschedule') {
      assert.deepEqual(bare, ['$2::timestamptz', '$2::timestamptz']);
      assert.match(st, /run_at = CASE WHEN \$2::timestamptz IS NULL THEN jobs\.run_at ELSE GREATEST\(\$2::timestamptz, now\(\)\) END/);
    } else {
      assert.deepEqual(bare, [], `${name} binds a bare timestamp`);
    }
  }
});

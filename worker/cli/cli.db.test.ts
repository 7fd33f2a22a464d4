/**
 * `npx leasehold` as scripts use it: the real command (bin/leasehold.mjs) in a real
 * process against a real database and Redis, checked by exit code, stdout and stderr.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { startProxy } from '../../test/chaos/proxy';
import { cleanup } from '../../test/cleanup';
import { testDatabase } from '../../test/db';
import { REDIS_URL } from '../../test/env';
import { insertJob, jobRow } from '../../test/factories';
import { type CliRun, runCli, startNode, uniquePrefix, workerEnv } from '../../test/processes';
import { waitFor } from '../../test/wait';

const db = await testDatabase();
const prefix = uniquePrefix('cli');
const redis = new Redis(REDIS_URL);
cleanup(() => redis.disconnect());
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-cli-'));
cleanup(() => fs.rmSync(tmp, { recursive: true, force: true }));

type Run = CliRun;

const cli = (args: string[], o: { input?: string | Buffer; env?: Record<string, string> } = {}) =>
  runCli(args, { input: o.input, env: { DATABASE_URL: db.url, REDIS_URL, LEASEHOLD_REDIS_PREFIX: prefix, ...o.env } });

const ok = (r: Run, code = 0) => assert.equal(r.code, code, `exit ${r.code}, expected ${code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
const count = async (where = 'true', values: unknown[] = []) =>
  (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE ${where}`, values)).rows[0].n as number;

describe('usage', () => {
  test('--help on every verb exits 0, gives examples, documents the exit codes and fits 80 columns', async () => {
    // Every verb, as the top-level help and each group's help list them.
    const listed = (help: string) => [...(help.split('Commands:')[1] ?? '').matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1]!).filter((v) => v !== 'help');
    const top = await cli(['--help']);
    const verbs = listed(top.stdout);
    assert.ok(verbs.length >= 14, verbs.join(' '));
    const firsts = await Promise.all(verbs.map((verb) => cli([verb, '--help'])));
    const groups = verbs.filter((_, k) => listed(firsts[k]!.stdout).length > 0);
    const leaves = verbs.flatMap((verb, k) => (groups.includes(verb) ? listed(firsts[k]!.stdout).map((sub) => [verb, sub]) : [[verb]]));
    const leafRuns = await Promise.all(leaves.map((leaf) => (leaf.length === 1 ? firsts[verbs.indexOf(leaf[0]!)]! : cli([...leaf, '--help']))));
    for (const [k, leaf] of leaves.entries()) {
      const r = leafRuns[k]!;
      ok(r);
      const verb = leaf.join(' ');
      assert.match(r.stdout, /^Examples?:\n {2}\S/m, `${verb}: examples`);
      assert.match(r.stdout, /Exit codes:\n\s+0\s+done\n\s+1\s+refused[^\n]*\n\s+2\s+bad usage[^\n]*\n\s+3\s+the database is unreachable/, verb);
    }
    // Piped, Commander wraps descriptions at 80 columns but keeps their own line breaks, and
    // prints text added after the options as written: breaks meant for a wider terminal left
    // a word on a line of its own, and the after-texts ran past 80.
    const all: [string, typeof top][] = [['', top], ...verbs.map((v, k) => [v, firsts[k]!] as [string, typeof top]), ...leaves.map((l, k) => [l.join(' '), leafRuns[k]!] as [string, typeof top])];
    for (const [name, r] of all) {
      ok(r);
      for (const line of r.stdout.split('\n')) assert.ok(line.length <= 80, `${name}: ${line.length} columns: ${line}`);
    }
  });

  test('bad usage exits 2 and changes nothing', async () => {
    const cases = [
      ['no-such-verb'],
      ['jobs', '--bogus'],
      ['jobs', '--status', 'bogus'],
      ['jobs', '--limit', '0'],
      ['jobs', '--finished-since', 'yesterday'],
      ['show', 'abc'],
      ['requeue'],
      ['requeue', '--queue', 'x'],
      ['requeue', '1', '--status', 'failed'],
      ['cancel', '--status', 'failed', '--limit', '-3'],
      ['enqueue'],
      ['enqueue', 'demo.noop', '--file', '-'],
      ['enqueue', 'demo.noop', '{not json'],
      ['enqueue', 'demo.sleep', '{"ms": "soon"}'],
      ['enqueue', 'no.such.type'],
      ['enqueue', '--file', path.join(tmp, 'missing.jsonl')],
    ];
    const runs = await Promise.all(cases.map((args) => cli(args)));
    runs.forEach((r, k) => {
      assert.equal(r.code, 2, `${cases[k]!.join(' ')} → ${r.code}\n${r.stderr}`);
      assert.ok(r.stderr.trim(), `${cases[k]!.join(' ')} says why on stderr`);
    });
    assert.equal(await count(), 0);
  });

  test('ordinary bad input is exit 2 with what was wrong, never an "unexpected error"', async () => {
    const cases: [string[], RegExp][] = [
      [['schedule', 'add', 'cli-s1', '--cron', '* * * * *', '--type', 'demo.noop', '-q', ''], /^leasehold: queue: .*>=1 characters\n$/],
      [['enqueue', '--file', tmp], /^leasehold: cannot read .*: not a file \(a directory\); give a JSON-lines file, or - for stdin\n$/],
      // Commander's own messages repeat the argument: an escape in it is shown, not obeyed.
      [['show', '\u001b[2Jx'], /^error: command-argument value '\\x1b\[2Jx' is invalid for argument 'id'/],
      [['schedule', 'add', 'cli-s1', '--cron', '30 4 1', '--type', 'demo.noop'], /^leasehold: cron "30 4 1" \(UTC\): 3 fields: five are needed/],
      [['schedule', 'add', ' cli-s1 ', '--cron', '0 3 * * *', '--type', 'demo.noop'], /^leasehold: schedule " cli-s1 ": the name must not start or end with whitespace\n$/],
      [['schedule', 'add', '..', '--cron', '0 3 * * *', '--type', 'demo.noop'], /^leasehold: schedule "..": the name must not be "." or ".." \(a URL path cannot name them\)\n$/],
      [['user', 'add', 'cli-both', '--role', 'viewer', '--generate', '--password-stdin'], /^leasehold: give --password-stdin or --generate, not both\n$/],
      // A single job's fields are flags: the message names the flag typed, not the API's field.
      [['enqueue', 'demo.noop', '{}', '--run-at', 'tomorrow'], /^leasehold: --run-at: must be an ISO 8601 date-time with a time zone/],
      [['enqueue', 'demo.noop', '{}', '--singleton-key', ''], /^leasehold: --singleton-key: /],
    ];
    const runs = await Promise.all(cases.map(([args]) => cli(args)));
    runs.forEach((r, k) => {
      const [args, said] = cases[k]!;
      assert.equal(r.code, 2, `${args.join(' ')} → ${r.code}\n${r.stderr}`);
      assert.match(r.stderr, said, args.join(' '));
    });
    assert.equal(await count(), 0);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM schedules WHERE name IN ('cli-s1', '..')`)).rows[0].n, 0);
  });

  test('an unreachable database exits 3', async () => {
    const r = await cli(['status'], { env: { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' } });
    ok(r, 3);
    assert.match(r.stderr, /cannot reach the database/);
  });
});

describe('enqueue', () => {
  test('one job: its id on stdout, rung in Redis', async () => {
    const r = await cli(['enqueue', 'demo.sleep', '{"ms": 5}', '--queue', 'cli-one', '--max-attempts', '2']);
    ok(r);
    const id = r.stdout.trim();
    assert.match(id, /^\d+$/);
    assert.equal((await jobRow(db.pool, id)).max_attempts, 2);
    assert.deepEqual(await redis.lrange(`${prefix}:queue:cli-one`, 0, -1), [id]);
    const again = await cli(['enqueue', 'demo.noop', '--idempotency-key', 'cli-k', '--json']);
    const same = await cli(['enqueue', 'demo.noop', '--idempotency-key', 'cli-k', '--json']);
    assert.equal(JSON.parse(same.stdout).id, JSON.parse(again.stdout).id);
    assert.equal(JSON.parse(same.stdout).created, false);
    const single = await cli(['enqueue', 'demo.noop', '--singleton-key', 'cli-s']);
    const held = await cli(['enqueue', 'demo.noop', '--singleton-key', 'cli-s']);
    assert.equal(held.stdout, `${single.stdout.trim()}\t(an existing job for this singleton key)\n`);
    assert.equal((await jobRow(db.pool, single.stdout.trim())).singleton_key, 'cli-s');
    assert.match((await cli(['show', single.stdout.trim()])).stdout, /singleton key\s*│\s*cli-s\b/);
  });

  test('--priority: kept on the job and rung in its level\'s list; a file\'s lines may give their own; out of range is refused', async () => {
    const r = await cli(['enqueue', 'demo.noop', '--queue', 'cli-prio', '--priority', '4']);
    ok(r);
    const id = r.stdout.trim();
    assert.equal((await jobRow(db.pool, id)).priority, 4);
    assert.deepEqual(await redis.lrange(`${prefix}:queue-p4:cli-prio`, 0, -1), [id]);
    const table = await cli(['jobs', '--queue', 'cli-prio']);
    ok(table);
    assert.match(table.stdout, new RegExp(`│ ${id} +│ queued +│ cli-prio +│ demo\\.noop +│ 4 +│ 0/`), `the jobs table shows the priority:\n${table.stdout}`);
    const shown = await cli(['show', id]);
    ok(shown);
    assert.match(shown.stdout, /│ in line +│ first: no due job of its queue is ahead of it/, `show says its place in line:\n${shown.stdout}`);
    // --json as GET /api/jobs/:id answers: who could run it too.
    const detail = JSON.parse((await cli(['show', id, '--json'])).stdout);
    assert.deepEqual([typeof detail.workers?.onQueue, typeof detail.workers?.withHandler, typeof detail.workers?.sweepStaleAfterMs, detail.ahead?.higher], ['number', 'number', 'number', 0]);
    const file = path.join(tmp, 'prio.jsonl');
    fs.writeFileSync(file, [{ type: 'demo.noop', queue: 'cli-prio-file' }, { type: 'demo.noop', queue: 'cli-prio-file', priority: 1 }].map((l) => JSON.stringify(l)).join('\n'));
    ok(await cli(['enqueue', '--file', file, '--priority', '7']));
    const { rows } = await db.pool.query(`SELECT priority FROM jobs WHERE queue = 'cli-prio-file' ORDER BY job_id`);
    assert.deepEqual(rows.map((row) => row.priority), [7, 1], "--priority for a line that gives none; a line's own kept");
    const refused = await cli(['enqueue', 'demo.noop', '--queue', 'cli-prio', '--priority', '10']);
    ok(refused, 2);
    assert.match(refused.stderr, /--priority/);
    assert.equal(await count('queue = $1', ['cli-prio']), 1, 'nothing written');
  });

  test('a JSON-lines file: 2500 lines in batches, refused lines named by number, nothing written for them', async () => {
    const lines: string[] = [];
    for (let n = 1; n <= 2500; n++) lines.push(JSON.stringify({ type: 'demo.noop', payload: { n }, queue: 'cli-file' }));
    lines[4] = '{"type": "demo.noop", '; // line 5: broken JSON
    lines[1199] = JSON.stringify({ type: 'no.such', queue: 'cli-file' }); // line 1200
    lines[2399] = JSON.stringify({ type: 'demo.sleep', payload: { ms: -1 }, queue: 'cli-file' }); // line 2400
    lines[1799] = ''; // line 1800: blank, skipped
    const file = path.join(tmp, 'jobs.jsonl');
    fs.writeFileSync(file, lines.join('\n') + '\n');
    const r = await cli(['enqueue', '--file', file]);
    ok(r, 1); // some refused, the rest enqueued
    assert.match(r.stderr, /^line 5: not valid JSON/m);
    assert.match(r.stderr, /^line 1200: type: unknown job type "no.such"/m);
    assert.match(r.stderr, /^line 2400: payload\.ms: .*\(for demo\.sleep\)/m);
    assert.equal(r.stderr.match(/^line \d+:/gm)!.length, 3);
    assert.match(r.stdout, /enqueued 2496 job\(s\) from 2500 line\(s\); refused 3 line\(s\): 5, 1200, 2400/);
    assert.equal(await count('queue = $1', ['cli-file']), 2496);
    assert.equal(await count(`queue = 'cli-file' AND payload->>'n' IN ('5', '1200', '2400', '1800')`), 0);
    assert.equal(await redis.llen(`${prefix}:queue:cli-file`), 2496);
  });

  test('from stdin, with a progress bar when asked, --json summary; a re-run with idempotency keys adds nothing', async () => {
    const input = Array.from({ length: 30 }, (_, n) => JSON.stringify({ type: 'demo.noop', idempotencyKey: `cli-stdin-${n}` })).join('\n');
    const r = await cli(['enqueue', '--file', '-', '--queue', 'cli-stdin', '--json', '--progress'], { input });
    ok(r);
    const s = JSON.parse(r.stdout);
    assert.deepEqual([s.lines, s.enqueued, s.existing, s.refused], [30, 30, 0, 0]);
    assert.match(r.stderr, /enqueued 30 jobs/, 'the progress line');
    assert.doesNotMatch(r.stderr, /\{\w+\}/, 'no field shown unfilled');
    // A file's bar has a percentage and an ETA: neither shows cli-progress's own placeholders.
    const file = path.join(tmp, 'bar.jsonl');
    fs.writeFileSync(file, Array.from({ length: 40 }, () => JSON.stringify({ type: 'demo.noop', queue: 'cli-bar' })).join('\n'));
    const bar = await cli(['enqueue', '--file', file, '--progress']);
    ok(bar);
    assert.match(bar.stderr, /enqueueing \[[^\]]*\] 100% \| 40 jobs \| line 40 \| ETA (\d+s|\?)\n/);
    assert.doesNotMatch(bar.stderr, /\{\w+\}|LLs|NFs/);
    assert.equal(await count('queue = $1', ['cli-stdin']), 30, '--queue applies to lines that name none');
    const again = JSON.parse((await cli(['enqueue', '--file', '-', '--queue', 'cli-stdin', '--json'], { input })).stdout);
    assert.deepEqual([again.enqueued, again.existing], [0, 30]);
  });

  test('a file that starts with a UTF-8 byte-order mark (saved by a Windows tool): its first line is a job', async () => {
    const file = path.join(tmp, 'bom.jsonl');
    fs.writeFileSync(file, '\ufeff' + [1, 2].map((n) => JSON.stringify({ type: 'demo.noop', payload: { n }, queue: 'cli-bom' })).join('\r\n') + '\r\n');
    const r = await cli(['enqueue', '--file', file]);
    ok(r);
    assert.match(r.stdout, /enqueued 2 job\(s\) from 2 line\(s\)$/m);
    assert.equal(await count(`queue = 'cli-bom'`), 2);
  });

  test('text that is not UTF-8 is refused, not read with its bytes replaced (two idempotency keys would become one)', async () => {
    const line = (key: Buffer) => Buffer.concat([Buffer.from('{"type":"demo.noop","queue":"cli-latin1","idempotencyKey":"lat-'), key, Buffer.from('"}\n')]);
    const input = Buffer.concat([line(Buffer.from([0xe9])), line(Buffer.from('ok')), line(Buffer.from([0xe8]))]);
    const r = await cli(['enqueue', '--file', '-'], { input });
    ok(r, 1);
    assert.match(r.stderr, /^line 1: not valid UTF-8/m);
    assert.match(r.stderr, /^line 3: not valid UTF-8/m);
    const { rows } = await db.pool.query(`SELECT idempotency_key FROM jobs WHERE queue = 'cli-latin1'`);
    assert.deepEqual(rows, [{ idempotency_key: 'lat-ok' }]);
    // On the command line Node has already replaced the byte with U+FFFD: refused as such.
    const { spawn } = await import('node:child_process');
    const { root } = await import('../../test/processes');
    const argv = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn('sh', ['-c', `exec "$0" bin/leasehold.mjs enqueue demo.noop -q cli-latin1 --idempotency-key "$(printf 'arg-\\351')"`, process.execPath], {
        cwd: root,
        env: { ...process.env, LEASEHOLD_LOG: 'warn', DATABASE_URL: db.url, REDIS_URL, LEASEHOLD_REDIS_PREFIX: prefix },
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.on('exit', (code) => resolve({ code, stderr }));
    });
    assert.equal(argv.code, 2, argv.stderr);
    assert.match(argv.stderr, /argument 6 is not valid UTF-8/);
    assert.equal(await count(`queue = 'cli-latin1'`), 1);
  });

  test('--reason takes what the API takes (at most 500 characters); a queue name with space around it is refused', async () => {
    const id = await insertJob(db.pool, { status: 'failed', queue: 'cli-reason' });
    const long = await cli(['requeue', id, '--reason', 'x'.repeat(501)]);
    ok(long, 2);
    assert.match(long.stderr, /--reason/);
    assert.equal((await jobRow(db.pool, id)).status, 'failed');
    const spaced = await cli(['queue', 'pause', ' cli-reason']);
    ok(spaced, 2);
    assert.match(spaced.stderr, /must not start or end with whitespace/);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM queues WHERE name LIKE '%cli-reason%'`)).rows[0].n, 0);
  });

  test('--all-or-nothing and --dry-run write nothing when a line is refused (exit 2)', async () => {
    const input = [JSON.stringify({ type: 'demo.noop', queue: 'cli-aon' }), JSON.stringify({ type: 'demo.noop', queue: 'cli-aon', maxAttempts: 0 })].join('\n');
    const aon = await cli(['enqueue', '--file', '-', '--all-or-nothing'], { input });
    ok(aon, 2);
    assert.match(aon.stderr, /^line 2: maxAttempts:/m);
    assert.match(aon.stdout, /nothing written/);
    const dry = await cli(['enqueue', '--file', '-', '--dry-run'], { input });
    ok(dry, 2);
    assert.equal(await count('queue = $1', ['cli-aon']), 0);
    assert.equal(await redis.llen(`${prefix}:queue:cli-aon`), 0);
    const good = await cli(['enqueue', '--file', '-', '--all-or-nothing'], { input: input.split('\n')[0]! });
    ok(good);
    assert.equal(await count('queue = $1', ['cli-aon']), 1);
    assert.equal(await redis.llen(`${prefix}:queue:cli-aon`), 1, 'rung after the commit');
  });

  test('a line is validated as the API validates it: a null field is refused, not replaced by the default', async () => {
    const input = [JSON.stringify({ type: 'demo.noop', queue: null }), JSON.stringify({ type: 'demo.noop', maxAttempts: null })].join('\n');
    const r = await cli(['enqueue', '--file', '-', '--dry-run', '-q', 'cli-null'], { input });
    ok(r, 2);
    assert.match(r.stderr, /^line 1: queue:/m);
    assert.match(r.stderr, /^line 2: maxAttempts:/m);
    // A number JSON reads as 0 (1e-400) is refused as the API refuses it, in a line or in the argument.
    const tiny = await cli(['enqueue', '--file', '-', '--dry-run', '-q', 'cli-null'], { input: JSON.stringify({ type: 'demo.noop' }).replace('}', ',"payload":{"x":1e-400}}') });
    ok(tiny, 2);
    assert.match(tiny.stderr, /^line 1: has a number too small for a double \(1e-400\)/m);
    const arg = await cli(['enqueue', '-q', 'cli-null', 'demo.noop', '{"x":1e-400}']);
    ok(arg, 2);
    assert.match(arg.stderr, /payload has a number too small for a double \(1e-400\), which would be read as 0/);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'cli-null'`)).rows[0].n, 0, 'nothing written');
    const rate = await cli(['queue', 'limit', 'cli-null', '--rate', '2000000/1s']);
    ok(rate, 2);
    assert.match(rate.stderr, /at most 1000000 per period/);
  });

  test('a pause, resume or limit that changes nothing says so, and the audit log counts it as skipped, not as a change', async () => {
    const steps: [string[], string][] = [
      [['queue', 'resume', 'cli-noop'], 'cli-noop: was not paused\n'],
      [['queue', 'pause', 'cli-noop'], 'cli-noop: paused\n'],
      [['queue', 'pause', 'cli-noop'], 'cli-noop: was already paused\n'],
      [['queue', 'resume', 'cli-noop'], 'cli-noop: resumed\n'],
    ];
    for (const [args, said] of steps) {
      const r = await cli(args);
      ok(r);
      assert.equal(r.stdout, said, args.join(' '));
    }
    ok(await cli(['queue', 'limit', 'cli-noop', '--concurrency', 'none']));
    const { rows } = await db.pool.query(`SELECT action, changed, skipped FROM audit_log WHERE target->>'queue' = 'cli-noop' ORDER BY audit_id`);
    assert.deepEqual(
      rows.map((r) => [r.action, r.changed, r.skipped]),
      [
        ['queue.resume', 0, 1],
        ['queue.pause', 1, 0],
        ['queue.pause', 0, 1],
        ['queue.resume', 1, 0],
        ['queue.limits', 0, 1],
      ],
    );
  });

  test('a pause or resume of a queue nothing names (no waiting job, live worker or schedule) adds a note: a typo pauses no queue anyone uses', async () => {
    const note = /^note: no job waits in cli-nameless and no live worker or schedule names it: is the name right\?$/m;
    const lone = await cli(['queue', 'pause', 'cli-nameless']);
    ok(lone);
    assert.equal(lone.stdout, 'cli-nameless: paused\n');
    assert.match(lone.stderr, note);
    ok(await cli(['queue', 'resume', 'cli-nameless']));
    const named = async (queue: string) => {
      const r = await cli(['queue', 'pause', queue]);
      ok(r);
      assert.equal(r.stdout, `${queue}: paused\n`);
      assert.doesNotMatch(r.stderr, /note:/, queue);
      ok(await cli(['queue', 'resume', queue]));
    };
    await insertJob(db.pool, { queue: 'cli-named-job' });
    await named('cli-named-job');
    await db.pool.query(`INSERT INTO workers (worker_id, host, pid, queues, concurrency, started_at, heartbeat_at) VALUES ('cli-named:1', 'h', 1, '{cli-named-worker}', 1, now(), now())`);
    await named('cli-named-worker');
    await db.pool.query(`INSERT INTO schedules (name, cron, type, queue, next_run_at) VALUES ('cli-named', '0 3 * * *', 'demo.noop', 'cli-named-schedule', now() + interval '1 day')`);
    await named('cli-named-schedule');
    // Gone again: other tests of this file count the live workers and the schedules.
    await db.pool.query(`DELETE FROM workers WHERE worker_id = 'cli-named:1'`);
    await db.pool.query(`DELETE FROM schedules WHERE name = 'cli-named'`);
  });
});

describe('reading', () => {
  test('--json prints the shapes the HTTP API answers with: queues, users, tokens, a pause', async () => {
    const paused = await cli(['queue', 'pause', 'cli-json-q', '--json']);
    ok(paused);
    const p = JSON.parse(paused.stdout);
    assert.deepEqual([p.queue, p.controls.name, p.controls.paused, typeof p.controls.pausedAt], ['cli-json-q', 'cli-json-q', true, 'string']);
    const queues = JSON.parse((await cli(['queue', 'list', '--json'])).stdout);
    assert.ok(queues.queues.some((c: { name: string }) => c.name === 'cli-json-q'), 'GET /api/queues: {queues}');
    ok(await cli(['queue', 'resume', 'cli-json-q']));
    const users = JSON.parse((await cli(['user', 'list', '--json'])).stdout);
    assert.ok(Array.isArray(users.users), 'GET /api/admin/users: {users}');
    assert.ok(users.users.every((u: Record<string, unknown>) => !('id' in u) && !('passwordHash' in u)), 'as the API shows them');
    const tokens = JSON.parse((await cli(['token', 'list', '--json'])).stdout);
    assert.ok(Array.isArray(tokens.tokens), 'GET /api/admin/tokens: {tokens}');
  });

  test('status, jobs (filters, pages, --json) and show', async () => {
    const failed = await insertJob(db.pool, { queue: 'cli-read', status: 'failed', attemptCount: 3, maxAttempts: 3 });
    await db.pool.query(
      `INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, outcome, error) VALUES ($1, 3, 'w-cli', now(), 'failed', 'smtp timeout')`,
      [failed],
    );
    await db.pool.query(`UPDATE jobs SET error = 'smtp timeout' WHERE job_id = $1`, [failed]);
    for (let k = 0; k < 4; k++) await insertJob(db.pool, { queue: 'cli-read' });

    const status = await cli(['status']);
    ok(status);
    assert.match(status.stdout, /cli-read\s+│ 4\s+│ 0\s+│ 0\s+│ 0\s+│ 1/);
    const sj = JSON.parse((await cli(['status', '--json'])).stdout);
    assert.equal(sj.stats.queues.find((q: { queue: string }) => q.queue === 'cli-read').counts.failed, 1);
    const rowsOnFile = (await db.pool.query(`SELECT count(*)::int AS n FROM workers`)).rows[0].n;
    assert.equal(sj.workersTotal, Math.max(rowsOnFile, sj.workers.length), 'every worker row on file, as GET /api/workers says');

    const p1 = JSON.parse((await cli(['jobs', '--queue', 'cli-read', '--limit', '3', '--json'])).stdout);
    assert.equal(p1.jobs.length, 3);
    const p2 = JSON.parse((await cli(['jobs', '--queue', 'cli-read', '--limit', '3', '--cursor', p1.nextCursor, '--json'])).stdout);
    assert.equal(p2.jobs.length, 2);
    assert.equal(p2.nextCursor, null);
    const recent = JSON.parse((await cli(['jobs', '--queue', 'cli-read', '--finished-since', '1h', '--json'])).stdout);
    assert.deepEqual(recent.jobs.map((j: { id: string }) => j.id), [failed], 'the one finished job, within the hour');
    assert.equal(JSON.parse((await cli(['jobs', '--queue', 'cli-read', '--created-since', '2999-01-01T00:00:00Z', '--json'])).stdout).jobs.length, 0);
    const retried = JSON.parse((await cli(['jobs', '--queue', 'cli-read', '--min-attempts', '2', '--json'])).stdout);
    assert.deepEqual(retried.jobs.map((j: { id: string }) => j.id), [failed], 'the one job claimed more than once');
    ok(await cli(['jobs', '--min-attempts', '0']), 2);
    const table = await cli(['jobs', '--status', 'failed', '--q', 'smtp']);
    ok(table);
    assert.match(table.stdout, new RegExp(`│ ${failed}\\s+│ failed\\s+│ cli-read .*smtp timeout`));

    const show = await cli(['show', failed]);
    ok(show);
    assert.match(show.stdout, /attempts\s+│ 3 of 3/);
    assert.match(show.stdout, /│ 3\s+│ w-cli .*│ failed\s+│ smtp timeout/);
    assert.equal(JSON.parse((await cli(['show', failed, '--json'])).stdout).attempts[0].error, 'smtp timeout');
    const missing = await cli(['show', '987654321']);
    ok(missing, 1);
    assert.match(missing.stderr, /no job with id 987654321/);
  });

  test('status counts a worker alive while it heartbeated within one lease (LEASEHOLD_LEASE_MS), as the console does', async () => {
    await db.pool.query(
      `INSERT INTO workers (worker_id, host, pid, queues, concurrency, started_at, heartbeat_at)
       VALUES ('w-cli-quiet', 'cli-host', 4242, '{default}', 2, now() - interval '1 hour', now() - interval '30 seconds')`,
    );
    const status = async (leaseMs: number) => {
      const env = { LEASEHOLD_LEASE_MS: String(leaseMs) };
      const [json, text] = await Promise.all([cli(['status', '--json'], { env }), cli(['status'], { env })]);
      ok(json);
      ok(text);
      const s = JSON.parse(json.stdout);
      return { alive: s.stats.workersAlive as number, stale: s.workers.find((w: { workerId: string }) => w.workerId === 'w-cli-quiet').stale, text: text.stdout };
    };
    const longer = await status(120_000);
    const shorter = await status(20_000); // 30 s silent: past this lease, its jobs are being recovered
    assert.equal(longer.stale, false);
    assert.equal(shorter.stale, true);
    assert.equal(shorter.alive, longer.alive - 1);
    assert.match(longer.text, /│ w-cli-quiet /);
    assert.doesNotMatch(shorter.text, /w-cli-quiet/);
    assert.match(shorter.text, new RegExp(`workers alive: ${shorter.alive}$`, 'm'));
  });

  test('control characters in job data are printed escaped, never raw (a queue name or an error cannot drive the terminal)', async () => {
    const queue = 'evil\u001b]0;pwned\u0007\u001b[2J'; // sets the title, clears the screen
    const error = 'boom\u009b2J\r\u001b[1A\u001b[2Kforged line\u007f';
    const id = await insertJob(db.pool, { queue, type: 'demo.\u001b[31mred', status: 'failed', workerId: 'w-\u0007bell' });
    await db.pool.query(`UPDATE jobs SET error = $2 WHERE job_id = $1`, [id, error]);
    await db.pool.query(`INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, outcome, error) VALUES ($1, 1, 'w-\u0007bell', now(), 'failed', $2)`, [id, error]);
    const runs = { jobs: await cli(['jobs', '--queue', queue]), show: await cli(['show', id]), status: await cli(['status']) };
    for (const [verb, r] of Object.entries(runs)) {
      ok(r);
      assert.doesNotMatch(r.stdout + r.stderr, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/, `${verb} prints no control character but newlines`);
    }
    assert.ok(runs.jobs.stdout.includes('evil\\x1b]0;pwned\\x07\\x1b[2J'), runs.jobs.stdout);
    assert.ok(runs.jobs.stdout.includes('boom\\u009b2J \\x1b[1A\\x1b[2Kforged'), 'whitespace folded, the rest escaped');
    assert.ok(runs.show.stdout.includes('demo.\\x1b[31mred'), runs.show.stdout);
    assert.ok(runs.show.stdout.includes('w-\\x07bell'), runs.show.stdout);
    assert.ok(runs.status.stdout.includes('evil\\x1b]0;pwned'), runs.status.stdout);
    // --json was already safe: JSON escapes them, and a script gets the text exactly
    assert.equal(JSON.parse((await cli(['show', id, '--json'])).stdout).job.queue, queue);
  });
});

describe('actions', () => {
  test('requeue and cancel by id: 0 when done, 1 with the reason when refused', async () => {
    const failed = await insertJob(db.pool, { status: 'failed', attemptCount: 3, maxAttempts: 3 });
    const running = await insertJob(db.pool, { status: 'running', workerId: 'w-live', leaseInMs: 60_000 });
    const r = await cli(['requeue', failed]);
    ok(r);
    assert.match(r.stdout, new RegExp(`^${failed}\\trequeued$`, 'm'));
    const mixed = await cli(['cancel', running, '987654321']);
    ok(mixed, 1);
    assert.match(mixed.stdout, new RegExp(`^${running}\\tcancel_requested`, 'm'));
    assert.match(mixed.stdout, /^987654321\tnot_found\tno such job$/m);
    const refused = await cli(['requeue', running, '--json']);
    ok(refused, 1);
    assert.match(JSON.parse(refused.stdout).items[0].reason, /lease still held by w-live/);
  });

  test("the audit log records a requeue as the API does: its options (a revoked lease shows), and several jobs as the bulk action", async () => {
    const entryOf = async (id: string) =>
      (await db.pool.query(`SELECT action, details, actor_kind FROM audit_log WHERE $1 = ANY(job_ids) ORDER BY audit_id DESC LIMIT 1`, [id])).rows[0];
    const running = await insertJob(db.pool, { status: 'running', workerId: 'w-taken', leaseInMs: 60_000 });
    ok(await cli(['requeue', running, '--revoke-lease', '--reset-attempts']));
    const one = await entryOf(running);
    assert.deepEqual([one.action, one.actor_kind, one.details.revokeLease, one.details.resetAttempts], ['requeue', 'cli', true, true]);
    const [a, b] = [await insertJob(db.pool, { status: 'failed' }), await insertJob(db.pool, { status: 'failed' })];
    ok(await cli(['requeue', a, b]));
    const two = await entryOf(a);
    assert.deepEqual([two.action, two.details.revokeLease, two.details.resetAttempts], ['bulk.requeue', false, false]);
    const held = await insertJob(db.pool, { status: 'running', workerId: 'w-held', leaseInMs: 60_000, queue: 'cli-revoke' });
    ok(await cli(['requeue', '--status', 'running', '--queue', 'cli-revoke', '--revoke-lease']));
    const bulk = await entryOf(held);
    assert.deepEqual([bulk.action, bulk.details.revokeLease, bulk.details.matched], ['bulk.requeue', true, 1]);
    const [c, d] = [await insertJob(db.pool, {}), await insertJob(db.pool, {})];
    ok(await cli(['cancel', c, d]));
    assert.equal((await entryOf(c)).action, 'bulk.cancel');
  });

  test('a filter flag or --dry-run beside job ids is refused (exit 2), and the job is not touched', async () => {
    const later = await insertJob(db.pool, { runInMs: 3_600_000, queue: 'cli-ids' });
    const failed = await insertJob(db.pool, { status: 'failed', queue: 'cli-ids' });
    const before = async () => (await db.pool.query(`SELECT job_id, status, run_at FROM jobs WHERE queue = 'cli-ids' ORDER BY job_id`)).rows;
    const was = await before();
    for (const args of [
      ['requeue', failed, '--dry-run'],
      ['requeue', later, '--dry-run', '--json'],
      ['cancel', later, '--dry-run'],
      ['cancel', later, '--queue', 'elsewhere'],
      ['requeue', failed, '--limit', '1'],
    ]) {
      const r = await cli(args);
      ok(r, 2);
      assert.match(r.stderr, /^leasehold: --(dry-run|queue|limit) goes with --status \(a bulk (requeue|cancel)\), not with job ids: nothing was (requeued|cancelled)\n$/, args.join(' '));
    }
    assert.deepEqual(await before(), was);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM audit_log WHERE job_ids && $1::bigint[]`, [[later, failed]])).rows[0].n, 0);
  });

  test('reschedule by id: a new due time or priority for a waiting job, refused with the reason for a running one', async () => {
    const waiting = await insertJob(db.pool, { runInMs: 3_600_000 });
    const running = await insertJob(db.pool, { status: 'running', workerId: 'w-busy', leaseInMs: 60_000 });
    const r = await cli(['reschedule', waiting, '--at', '2099-03-01T09:30:00Z', '--priority', '6', '--reason', 'after the freeze']);
    ok(r);
    assert.match(r.stdout, new RegExp(`^${waiting}\\trescheduled$`, 'm'));
    const row = (await db.pool.query(`SELECT run_at, priority FROM jobs WHERE job_id = $1`, [waiting])).rows[0];
    assert.deepEqual([row.run_at.toISOString(), row.priority], ['2099-03-01T09:30:00.000Z', 6]);
    const audit = (await db.pool.query(`SELECT actor_kind, reason FROM audit_log WHERE action = 'reschedule' AND $1 = ANY(job_ids)`, [waiting])).rows;
    assert.deepEqual(audit, [{ actor_kind: 'cli', reason: 'after the freeze' }]);
    const refused = await cli(['reschedule', running, '--priority', '0', '--json']);
    ok(refused, 1);
    assert.match(JSON.parse(refused.stdout).items[0].reason, /^running on w-busy: only a waiting job/);
    for (const bad of [[waiting], [waiting, '--at', 'soon'], [waiting, '--priority', '10']]) {
      const res = await cli(['reschedule', ...bad]);
      ok(res, 2);
    }
    assert.match((await cli(['reschedule', waiting])).stderr, /give --at, --priority or both/);
    assert.match((await cli(['reschedule', waiting, '--at', 'soon'])).stderr, /--at: must be an ISO 8601 date-time/);
  });

  test('bulk requeue by filter: keyset pages, batches of 1000, --limit, other queues untouched', async () => {
    await db.pool.query(
      `INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, finished_at, error)
       SELECT CASE WHEN g <= 2300 THEN 'cli-bulk' ELSE 'cli-other' END, 'demo.noop', 'failed', '{}', 3, 3, 3, now(), 'boom'
         FROM generate_series(1, 2400) g`,
    );
    const dry = await cli(['requeue', '--status', 'failed', '--queue', 'cli-bulk', '--dry-run', '--json']);
    ok(dry);
    assert.deepEqual(JSON.parse(dry.stdout), { dryRun: true, matched: 2300 });
    assert.equal(await count(`queue = 'cli-bulk' AND status = 'failed'`), 2300);

    const r = await cli(['requeue', '--status', 'failed', '--queue', 'cli-bulk', '--limit', '2100', '--reset-attempts', '--json', '--progress']);
    ok(r);
    const s = JSON.parse(r.stdout);
    assert.equal(s.matched, 2100);
    assert.equal(s.changed, 2100);
    assert.deepEqual(s.outcomes, { requeued: 2100 });
    assert.match(r.stderr, /requeue \[[^\]]*\] 100% \| 2100\/2100 jobs/, 'the progress bar');
    // --reset-attempts grants a whole budget again (attempt_count, the fencing token, never goes down)
    assert.equal(await count(`queue = 'cli-bulk' AND status = 'queued' AND attempt_count = 3 AND max_attempts = 6`), 2100);
    // newest first: the 200 oldest are still failed
    const { rows } = await db.pool.query(
      `SELECT max(job_id) FILTER (WHERE status = 'failed') AS failed_max, min(job_id) FILTER (WHERE status = 'queued') AS queued_min FROM jobs WHERE queue = 'cli-bulk'`,
    );
    assert.ok(BigInt(rows[0].failed_max) < BigInt(rows[0].queued_min));
    assert.equal(await count(`queue = 'cli-other' AND status = 'failed'`), 100);
    assert.equal(await redis.llen(`${prefix}:queue:cli-bulk`), 2100);

    const cancel = await cli(['cancel', '--status', 'queued', '--queue', 'cli-bulk']);
    ok(cancel);
    assert.match(cancel.stdout, /2100 job\(s\) matched: 2100 cancelled/);
  });

  test('recover --dry-run previews an expired lease without moving it; recover moves it', async () => {
    const id = await insertJob(db.pool, { status: 'running', workerId: 'w-gone', leaseInMs: -4_000, queue: 'cli-rec' });
    const dry = await cli(['recover', '--dry-run']);
    ok(dry);
    assert.match(dry.stdout, /would move 1 job\(s\) with an expired lease/);
    assert.match(dry.stdout, new RegExp(`│ ${id}\\s+│ demo.sleep\\s+│ cli-rec\\s+│ w-gone\\s+│ 1/3 .*│ retrying`));
    assert.equal((await jobRow(db.pool, id)).status, 'running');
    assert.match((await cli(['show', id])).stdout, /│ lease +│ expired \d+\.\d s ago \(the recover sweep moves it\)/);
    const run = await cli(['recover', '--json']);
    ok(run);
    assert.ok(JSON.parse(run.stdout).expired.some((e: { id: string; status: string }) => e.id === id && e.status === 'retrying'));
    assert.equal((await jobRow(db.pool, id)).status, 'retrying');
  });
});

describe('tokens', () => {
  const live = async (name: string) =>
    (await db.pool.query(`SELECT token_id::text AS id FROM api_tokens WHERE name = $1 AND revoked_at IS NULL ORDER BY token_id`, [name])).rows.map((r) => r.id as string);

  test('a new token named all digits is refused (it would read as an id); nothing written', async () => {
    const r = await cli(['token', 'create', '--name', '3', '--scope', 'viewer']);
    ok(r, 2);
    assert.match(r.stderr, /name: 3 is all digits and would read as a token id/);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM api_tokens WHERE name = '3'`)).rows[0].n, 0);
  });

  test('rotating a name: revoke by name is refused while two live tokens share it; by id revokes that one; --all revokes every one', async () => {
    const made = async (name: string) => {
      const r = await cli(['token', 'create', '--name', name, '--scope', 'enqueue', '--json']);
      ok(r);
      return JSON.parse(r.stdout).id as string;
    };
    const old = await made('cli-billing');
    const fresh = await made('cli-billing');
    const both = await cli(['token', 'revoke', 'cli-billing']);
    ok(both, 2);
    assert.match(both.stderr, new RegExp(`2 live tokens are named cli-billing \\(ids ${old}, ${fresh}\\): revoke one by id, or all of them with --all`));
    assert.deepEqual(await live('cli-billing'), [old, fresh], 'nothing revoked');
    const byId = await cli(['token', 'revoke', old]);
    ok(byId);
    assert.equal(byId.stdout, `token ${old} (cli-billing): revoked\n`);
    assert.deepEqual(await live('cli-billing'), [fresh]);
    ok(await cli(['token', 'revoke', 'cli-billing'])); // one live token has the name now
    assert.deepEqual(await live('cli-billing'), []);

    const a = await made('cli-rotate');
    const b = await made('cli-rotate');
    const all = await cli(['token', 'revoke', 'cli-rotate', '--all']);
    ok(all);
    assert.equal(all.stdout, `token ${a} (cli-rotate): revoked\ntoken ${b} (cli-rotate): revoked\n`);
    assert.deepEqual(await live('cli-rotate'), []);
  });
});

describe('schedules', () => {
  test('schedule list says why a schedule cannot tick, escaped; status counts such schedules', async () => {
    const name = 'cli-cannot-tick';
    await db.pool.query(
      `INSERT INTO schedules (name, cron, timezone, queue, type, payload, max_attempts, next_run_at, enabled, last_error, last_error_at)
       VALUES ($1, '* * * * *', 'UTC', 'default', 'demo.noop', '{}', 3, now(), true, $2, now())`,
      [name, 'refused\u001b[2J by the database'],
    );
    try {
      const r = await cli(['schedule', 'list']);
      ok(r);
      assert.match(r.stdout, /^cli-cannot-tick: its due tick cannot be enqueued \(last tried \d{4}-[^)]+\): refused\\x1b\[2J by the database$/m);
      const json = await cli(['schedule', 'list', '--json']);
      ok(json);
      // The shape GET /api/schedules answers with.
      const body = JSON.parse(json.stdout) as { schedules: { name: string; lastError: string | null }[]; dbNow: string };
      assert.match(body.dbNow, /^\d{4}-\d\d-\d\dT/);
      const listed = body.schedules.find((s) => s.name === name);
      assert.equal(listed?.lastError, 'refused\u001b[2J by the database');
      const status = await cli(['status']);
      ok(status);
      assert.match(status.stdout, /schedules that cannot tick: 1 \(schedule list says why\)/);
    } finally {
      await db.pool.query(`DELETE FROM schedules WHERE name = $1`, [name]);
    }
  });

  test("schedule add without --max-attempts gives its jobs the type's registered attempts; with it, its own", async () => {
    await db.pool.query(`INSERT INTO job_types (name, max_attempts) VALUES ('cli.patient', 12) ON CONFLICT (name) DO UPDATE SET max_attempts = 12`);
    try {
      ok(await cli(['schedule', 'add', 'cli-patient', '--cron', '0 4 * * *', '--type', 'cli.patient']));
      ok(await cli(['schedule', 'add', 'cli-hasty', '--cron', '0 4 * * *', '--type', 'cli.patient', '--max-attempts', '2']));
      const { rows } = await db.pool.query(`SELECT name, max_attempts FROM schedules WHERE name IN ('cli-patient', 'cli-hasty') ORDER BY name`);
      assert.deepEqual(rows, [{ name: 'cli-hasty', max_attempts: 2 }, { name: 'cli-patient', max_attempts: 12 }]);
    } finally {
      await db.pool.query(`DELETE FROM schedules WHERE name IN ('cli-patient', 'cli-hasty'); DELETE FROM job_types WHERE name = 'cli.patient'`);
    }
  });
});

describe('the database in the way', () => {
  test("a database at another build's schema is refused before anything is read or written (exit 3)", async () => {
    const newer = Date.now() + 50 * 365 * 86_400_000;
    await db.pool.query(`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('from-a-newer-build', $1)`, [newer]);
    try {
      for (const args of [['enqueue', 'demo.noop', '--queue', 'cli-schema'], ['status'], ['recover']]) {
        const r = await cli(args);
        ok(r, 3);
        assert.match(r.stderr, /^leasehold: the database was migrated by a newer Leasehold \(its last migration is from 2\d{3}-/, args.join(' '));
      }
      assert.equal(await count(`queue = 'cli-schema'`), 0);
    } finally {
      await db.pool.query(`DELETE FROM drizzle.__drizzle_migrations WHERE hash = 'from-a-newer-build'`);
    }
    // An older build's database (its newest migration not applied): a column a verb reads may
    // not be there; said before any statement fails on it.
    const last = (await db.pool.query(`SELECT id, hash, created_at FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1`)).rows[0];
    await db.pool.query(`DELETE FROM drizzle.__drizzle_migrations WHERE id = $1`, [last.id]);
    try {
      const r = await cli(['schedule', 'list']);
      ok(r, 3);
      assert.match(r.stderr, /^leasehold: the database was migrated by an older Leasehold .*: run `npx leasehold migrate`\n$/);
    } finally {
      await db.pool.query(`INSERT INTO drizzle.__drizzle_migrations (id, hash, created_at) VALUES ($1, $2, $3)`, [last.id, last.hash, last.created_at]);
    }
    ok(await cli(['status']));
  });

  /** Runs a verb while `jobs` is locked, and once its statement waits for the lock, does `meanwhile` to it (its backend's pid). */
  async function behindLock(args: string[], meanwhile: (pid: number) => Promise<unknown>, env: Record<string, string> = {}) {
    const holder = await db.pool.connect();
    try {
      await holder.query(`BEGIN; LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE`);
      const run = cli(args, { env });
      const pid = await waitFor('the verb to wait for the lock', async () =>
        (await db.pool.query(`SELECT pid FROM pg_stat_activity WHERE application_name = 'leasehold:cli' AND wait_event_type = 'Lock'`)).rows[0]?.pid as number | undefined);
      await meanwhile(pid);
      await holder.query('ROLLBACK');
      return await run;
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
    }
  }

  test('a statement the server ends (a statement timeout, a cancel) is "busy: try again" (exit 3), not a bug', async () => {
    for (const args of [['jobs', '--queue', 'cli-busy'], ['enqueue', 'demo.noop', '--queue', 'cli-busy']]) {
      const r = await behindLock(args, (pid) => db.pool.query(`SELECT pg_cancel_backend($1)`, [pid]));
      ok(r, 3);
      assert.equal(r.stderr, 'leasehold: the database is busy; the statement it was running was rolled back: try again\n', args.join(' '));
    }
    assert.equal(await count(`queue = 'cli-busy'`), 0);
  });

  test('a connection lost while a write ran is exit 4, "may or may not have been done" (here it was); lost under a read, exit 3', async () => {
    const proxy = await startProxy(Number(new URL(db.url).port));
    const through = db.url.replace(`:${new URL(db.url).port}/`, `:${proxy.port}/`);
    try {
      const write = await behindLock(['enqueue', 'demo.noop', '--queue', 'cli-lost'], () => proxy.close(), { DATABASE_URL: through });
      ok(write, 4);
      assert.match(write.stderr, /^leasehold: the database stopped answering: what was asked may or may not have been done\. Read it back before retrying/);
      // The server never heard the client go: the insert went on once the lock was free.
      await waitFor('the insert to commit', async () => (await count(`queue = 'cli-lost'`)) === 1);
      const again = await startProxy(Number(new URL(db.url).port));
      try {
        const read = await behindLock(['jobs', '--queue', 'cli-lost'], () => again.close(), { DATABASE_URL: db.url.replace(`:${new URL(db.url).port}/`, `:${again.port}/`) });
        ok(read, 3);
        assert.match(read.stderr, /^leasehold: the database stopped answering; this request only reads, so nothing was changed: try again\n$/);
      } finally {
        await again.close().catch(() => {});
      }
    } finally {
      await proxy.close().catch(() => {});
    }
  });
});

// Last: its jobs stay in the table, which the usage tests expect empty.
describe('worker', () => {
  test('worker: runs workers until it is stopped (the verb does not end when they have started)', async () => {
    const queue = uniquePrefix('cli-worker');
    const w = startNode('bin/leasehold.mjs', ['worker', '--processes', '1', '--concurrency', '1', '--queues', queue], workerEnv({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix }));
    try {
      const first = await insertJob(db.pool, { queue, type: 'demo.noop', payload: {} });
      await waitFor('the first job to complete', async () => (await jobRow(db.pool, first)).status === 'completed');
      // Seconds later, still there to run the next.
      const started = (await db.pool.query(`SELECT now() AS t`)).rows[0].t as Date;
      await waitFor('two more seconds of its heartbeats', async () =>
        (await db.pool.query(`SELECT 1 FROM workers WHERE $1 = ANY(queues) AND stopped_at IS NULL AND heartbeat_at > $2::timestamptz + interval '2 s'`, [queue, started])).rows.length === 1);
      const second = await insertJob(db.pool, { queue, type: 'demo.noop', payload: {} });
      await waitFor('the second job to complete', async () => (await jobRow(db.pool, second)).status === 'completed');
      assert.equal(w.child.exitCode, null, `still running:\n${w.output()}`);
    } finally {
      assert.equal((await w.stop()).code, 0, w.output());
    }
  });
});

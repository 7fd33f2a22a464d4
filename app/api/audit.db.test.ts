/**
 * The audit log: every operator action, through the API (as the console sends it) and
 * through the real `npx leasehold` command, leaves exactly one entry saying who, what,
 * what it applied to, how many changed and were skipped, and the reason; previews, dry
 * runs, reads and refused requests leave none. Entries show on the job's timeline (by job id).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cleanup } from '../../test/cleanup';
import { testDatabase } from '../../test/db';
import { REDIS_URL } from '../../test/env';
import { insertJob } from '../../test/factories';
import { runCli, uniquePrefix } from '../../test/processes';
import { loadRoutes } from '../../test/api-routes';
import { send } from '../../test/auth/harness';
import type { AuditAction } from '../../lib/audit/actions';

const db = await testDatabase();
const prefix = uniquePrefix('audit');
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = prefix;
process.env.LEASEHOLD_AUTH = 'on';
cleanup(async () => (await import('@/lib/server/context')).closeServerContext());

const { userAdd, sessionCreate } = await import('@/lib/auth/store');
const { audited } = await import('@/lib/audit/log');
const { QueueError } = await import('@/lib/queue/errors');
const routes = await loadRoutes();
const login = async (name: string, role: string) =>
  (await sessionCreate(db.pool, (await userAdd(db.pool, { name, role, password: `${name}-password-123` })).id)).id;
const olga = await login('olga', 'operator');
const adam = await login('adam', 'admin');
const vic = await login('vic', 'viewer');

interface Entry {
  actor: string;
  actor_kind: string;
  action: string;
  target: Record<string, unknown>;
  job_ids: string[];
  changed: number;
  skipped: number;
  reason: string | null;
  details: Record<string, unknown>;
}

/** Runs `act` and returns the audit entries it added (asserting how many). */
async function entriesOf(expect: number, act: () => Promise<unknown>): Promise<Entry[]> {
  const max = (await db.pool.query('SELECT coalesce(max(audit_id), 0) AS id FROM audit_log')).rows[0].id;
  await act();
  const { rows } = await db.pool.query(
    `SELECT actor, actor_kind, action, target, job_ids::text[] AS job_ids, changed, skipped, reason, details FROM audit_log WHERE audit_id > $1 ORDER BY audit_id`,
    [max],
  );
  assert.equal(rows.length, expect, `expected ${expect} audit entries, got ${JSON.stringify(rows)}`);
  return rows;
}
const one = async (act: () => Promise<unknown>) => (await entriesOf(1, act))[0]!;
const post = async (cookie: string, p: string, params: Record<string, string>, body?: unknown, status = 200) => {
  const res = await send(routes, 'POST', p, { cookie, params, body });
  assert.equal(res.status, status, `${p} → ${res.status}: ${await res.clone().text()}`);
  return res;
};

const patch = async (cookie: string, p: string, params: Record<string, string>, body: unknown, status = 200) => {
  const res = await send(routes, 'PATCH', p, { cookie, params, body });
  assert.equal(res.status, status, `${p} → ${res.status}: ${await res.clone().text()}`);
  return res;
};

describe('API (and the console, which calls it)', () => {
  test('single requeue and cancel: who, what, which job, changed or skipped, and the reason', async () => {
    const failed = await insertJob(db.pool, { status: 'failed' });
    let e = await one(() => post(olga, '/api/jobs/{id}/requeue', { id: failed }, { reason: 'fixed the mail server' }));
    assert.deepEqual([e.actor, e.actor_kind, e.action, e.job_ids, e.changed, e.skipped, e.reason], ['olga', 'user', 'requeue', [failed], 1, 0, 'fixed the mail server']);
    const running = await insertJob(db.pool, { status: 'running', workerId: 'w' });
    e = await one(() => post(olga, '/api/jobs/{id}/requeue', { id: running }, undefined, 409));
    assert.deepEqual([e.action, e.changed, e.skipped], ['requeue', 0, 1]);
    e = await one(() => post(olga, '/api/jobs/{id}/cancel', { id: failed }, { reason: 'not needed' }));
    assert.deepEqual([e.action, e.job_ids, e.changed, e.reason], ['cancel', [failed], 1, 'not needed']);
  });

  test('recover: a run is logged, a dry run is not', async () => {
    const expired = await insertJob(db.pool, { status: 'running', workerId: 'gone', leaseInMs: -5_000 });
    await entriesOf(0, () => post(olga, '/api/recover', {}, { dryRun: true }));
    const e = await one(() => post(olga, '/api/recover', {}, { reason: 'worker host died' }));
    assert.equal(e.action, 'recover');
    assert.ok(e.job_ids.includes(expired));
    assert.ok(e.changed >= 1);
  });

  test('bulk actions by ids and by filter, delete and recover-all: one entry each; previews none', async () => {
    const a = await insertJob(db.pool, { status: 'failed', queue: 'bulk-audit' });
    const b = await insertJob(db.pool, { status: 'failed', queue: 'bulk-audit' });
    const c = await insertJob(db.pool, { status: 'queued', queue: 'bulk-audit' });
    await entriesOf(0, () => post(olga, '/api/actions/{action}', { action: 'requeue' }, { ids: [a, b, c], preview: true }));
    let e = await one(() => post(olga, '/api/actions/{action}', { action: 'requeue' }, { ids: [a, b, c], reason: 'bulk retry', resetAttempts: true }));
    assert.deepEqual([e.action, e.changed, e.skipped, e.reason], ['bulk.requeue', 2, 1, 'bulk retry']);
    assert.equal(e.details.resetAttempts, true, 'the options it ran with are kept');
    assert.deepEqual([...e.job_ids].sort(), [a, b, c].sort());
    e = await one(() => post(olga, '/api/actions/{action}', { action: 'cancel' }, { filter: { queue: 'bulk-audit', status: 'queued' } }));
    assert.equal(e.action, 'bulk.cancel');
    assert.deepEqual((e.target as { filter: unknown }).filter, { queue: 'bulk-audit', status: 'queued' });
    assert.equal(e.changed, 3);
    assert.deepEqual([...e.job_ids].sort(), [a, b, c].sort(), 'the ids a filter touched are recorded');
    e = await one(() => post(adam, '/api/actions/{action}', { action: 'delete' }, { ids: [a, b] }));
    assert.deepEqual([e.actor, e.action, e.changed], ['adam', 'bulk.delete', 2]);
    // One job by id (its own page's buttons) is recorded as that job's action, as the per-job routes record it.
    e = await one(() => post(olga, '/api/actions/{action}', { action: 'cancel' }, { ids: [c] }));
    assert.deepEqual([e.action, e.job_ids], ['cancel', [c]]);
    e = await one(() => post(olga, '/api/actions/{action}', { action: 'recover' }, { all: true }));
    assert.equal(e.action, 'bulk.recover');
  });

  test('a bulk action by filter records every job it matched, past the report\'s first 1,000', async () => {
    const ids = (
      await db.pool.query(
        `INSERT INTO jobs (queue, type, status) SELECT 'audit-many', 'demo.noop', 'queued' FROM generate_series(1, 1500) RETURNING job_id::text AS id`,
      )
    ).rows.map((r) => r.id as string);
    const e = await one(() => post(olga, '/api/actions/{action}', { action: 'cancel' }, { filter: { queue: 'audit-many' } }));
    assert.equal(e.changed, 1500);
    assert.deepEqual([...e.job_ids].sort(), [...ids].sort(), 'every matched job\'s timeline shows the action');
  });

  test('recover over everything records every job it moved, past the report\'s first 1,000', async () => {
    const ids = (
      await db.pool.query(
        `INSERT INTO jobs (queue, type, status, attempt_count, worker_id, heartbeat_at, lease_expires_at, started_at)
         SELECT 'audit-expired', 'demo.noop', 'running', 1, 'gone', now() - interval '1 minute', now() - interval '5 s', now() - interval '1 minute'
           FROM generate_series(1, 1200) RETURNING job_id::text AS id`,
      )
    ).rows.map((r) => r.id as string);
    let res!: Response;
    const e = await one(async () => (res = await post(olga, '/api/actions/{action}', { action: 'recover' }, { all: true })));
    const recorded = new Set(e.job_ids);
    assert.deepEqual(ids.filter((id) => !recorded.has(id)), [], 'every moved job is in the entry');
    assert.equal('movedIds' in (await res.json()), false, 'the ids are not sent back');
  });

  test('recover of given ids records each of them once, moved or skipped', async () => {
    const idle = await insertJob(db.pool, { status: 'queued' });
    const e = await one(() => post(olga, '/api/recover', {}, { ids: [idle, idle, idle] }));
    assert.deepEqual([e.job_ids, e.changed, e.skipped], [[idle], 0, 1]);
  });

  test('queue pause, resume and limits: one entry each', async () => {
    for (const [body, action] of [
      [{ paused: true }, 'queue.pause'],
      [{ paused: false }, 'queue.resume'],
      [{ concurrencyLimit: 3, reason: 'protect the API' }, 'queue.limits'],
    ] as const) {
      const e = await one(() => post(olga, '/api/queues/{name}', { name: 'audit-q' }, body));
      assert.deepEqual([e.action, e.target, e.changed], [action, { queue: 'audit-q' }, 1]);
    }
  });

  test('schedule run now, pause and resume: one entry each, the run on its job; unknown → 404, a viewer → 403, and no entry', async () => {
    const { scheduleUpsert } = await import('@/lib/queue/ops');
    await scheduleUpsert(db.pool, { name: 'audit-nightly', cron: '0 3 * * *', type: 'demo.noop', queue: 'audit-sched' });
    const nextTick = async () => (await db.pool.query(`SELECT next_run_at FROM schedules WHERE name = 'audit-nightly'`)).rows[0].next_run_at.getTime();
    const tickBefore = await nextTick();
    let body: { id: string; created: boolean; queue: string; schedule: string } | undefined;
    let e = await one(async () => {
      body = await (await post(olga, '/api/schedules/{name}/run', { name: 'audit-nightly' }, { reason: 'the 3am run failed upstream' }, 202)).json();
    });
    assert.deepEqual([body!.schedule, body!.queue, body!.created], ['audit-nightly', 'audit-sched', true]);
    assert.deepEqual([e.actor, e.action, e.target, e.job_ids, e.changed, e.skipped, e.reason], [
      'olga', 'schedule.run', { schedule: 'audit-nightly' }, [body!.id], 1, 0, 'the 3am run failed upstream',
    ]);
    // A second click a moment later: the same job, logged as skipped.
    e = await one(async () => assert.equal((await (await post(olga, '/api/schedules/{name}/run', { name: 'audit-nightly' }, undefined, 202)).json()).id, body!.id));
    assert.deepEqual([e.action, e.job_ids, e.changed, e.skipped], ['schedule.run', [body!.id], 0, 1]);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'audit-sched'`)).rows[0].n, 1);
    assert.equal(await nextTick(), tickBefore, 'run now leaves the next tick where it was');

    e = await one(async () => {
      const r = await (await post(olga, '/api/schedules/{name}/pause', { name: 'audit-nightly' }, { reason: 'upstream down' })).json();
      assert.deepEqual([r.changed, r.schedule.paused], [true, true]);
    });
    assert.deepEqual([e.action, e.target, e.changed, e.skipped, e.reason], ['schedule.pause', { schedule: 'audit-nightly' }, 1, 0, 'upstream down']);
    // Paused already: success that changed nothing, as a queue's second pause is.
    e = await one(async () => assert.equal((await (await post(olga, '/api/schedules/{name}/pause', { name: 'audit-nightly' })).json()).changed, false));
    assert.deepEqual([e.action, e.changed, e.skipped], ['schedule.pause', 0, 1]);
    e = await one(async () => {
      const r = await (await post(olga, '/api/schedules/{name}/resume', { name: 'audit-nightly' })).json();
      assert.deepEqual([r.changed, r.schedule.paused, r.schedule.pausedAt], [true, false, null]);
    });
    assert.deepEqual([e.action, e.changed], ['schedule.resume', 1]);

    const token = (await (await post(adam, '/api/admin/tokens', {}, { name: 'sched-viewer', scope: 'viewer' }, 201)).json()).token as string;
    await entriesOf(0, async () => {
      for (const verb of ['run', 'pause', 'resume']) {
        const res = await post(olga, `/api/schedules/{name}/${verb}`, { name: 'no-such-schedule' }, {}, 404);
        assert.deepEqual(Object.keys((await res.json()).error), ['code', 'message']);
        await post(vic, `/api/schedules/{name}/${verb}`, { name: 'audit-nightly' }, {}, 403);
        const byToken = await send(routes, 'POST', `/api/schedules/{name}/${verb}`, { bearer: token, params: { name: 'audit-nightly' }, body: {} });
        assert.equal(byToken.status, 403, `a viewer token: ${verb}`);
        assert.equal((await byToken.json()).error.code, 'forbidden');
      }
    });
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'audit-sched'`)).rows[0].n, 1, 'nothing refused was run');
    assert.equal((await db.pool.query(`SELECT paused_at FROM schedules WHERE name = 'audit-nightly'`)).rows[0].paused_at, null);
  });

  test('users and tokens managed through the API: one entry each', async () => {
    let e = await one(() => post(adam, '/api/admin/users', {}, { name: 'api-user', role: 'viewer', password: 'api-user-password' }, 201));
    assert.deepEqual([e.actor, e.action, e.target], ['adam', 'user.add', { user: 'api-user' }]);
    e = await one(() => patch(adam, '/api/admin/users/{name}', { name: 'api-user' }, { role: 'operator' }));
    assert.deepEqual([e.action, e.target, e.changed, e.details], ['user.set', { user: 'api-user' }, 1, { role: 'operator', from: 'viewer', revokedTokens: [] }]);
    e = await one(() => post(adam, '/api/admin/users/{name}/disable', { name: 'api-user' }));
    assert.equal(e.action, 'user.disable');
    let id = '';
    e = await one(async () => {
      id = (await (await post(adam, '/api/admin/tokens', {}, { name: 'api-token', scope: 'enqueue' }, 201)).json()).id;
    });
    assert.equal(e.action, 'token.create');
    e = await one(() => post(adam, '/api/admin/tokens/{id}/revoke', { id }));
    assert.deepEqual([e.action, e.changed], ['token.revoke', 1]);
  });

  test('refused requests, reads and previews leave no entry', async () => {
    const j = await insertJob(db.pool, { status: 'failed' });
    await entriesOf(0, async () => {
      await post(vic, '/api/jobs/{id}/requeue', { id: j }, {}, 403);
      await post(olga, '/api/actions/{action}', { action: 'delete' }, { ids: [j] }, 403);
      await send(routes, 'POST', '/api/jobs/{id}/requeue', { params: { id: j }, cookie: olga, origin: 'https://evil.example' });
      await send(routes, 'GET', '/api/jobs', { cookie: vic });
      await send(routes, 'GET', '/api/audit', { cookie: vic });
      // An admin's request for something that does not exist is refused the same way.
      await post(adam, '/api/admin/tokens/{id}/revoke', { id: '987654321' }, {}, 404);
      await post(adam, '/api/admin/users/{name}/disable', { name: 'nobody-here' }, {}, 404);
      await patch(adam, '/api/admin/users/{name}', { name: 'nobody-here' }, { role: 'viewer' }, 404);
      // The last admin demoting themself: the console would have no admin.
      const last = await patch(adam, '/api/admin/users/{name}', { name: 'adam' }, { role: 'viewer' }, 409);
      assert.match((await last.json()).error.message, /adam is the last active admin/);
      // And so is an operator's for a job that does not exist.
      await post(olga, '/api/jobs/{id}/requeue', { id: '987654321' }, {}, 404);
      await post(olga, '/api/jobs/{id}/cancel', { id: '987654321' }, {}, 404);
    });
  });

  test("GET /api/audit filters by job id (the job's timeline), actor and action", async () => {
    const j = await insertJob(db.pool, { status: 'failed' });
    await post(olga, '/api/jobs/{id}/requeue', { id: j }, { reason: 'timeline' });
    const res = await send(routes, 'GET', '/api/audit', { cookie: vic, query: `jobId=${j}` });
    const page = await res.json();
    assert.equal(page.entries.length, 1);
    assert.deepEqual([page.entries[0].actor, page.entries[0].action, page.entries[0].reason], ['olga', 'requeue', 'timeline']);
    const byActor = await (await send(routes, 'GET', '/api/audit', { cookie: vic, query: 'actor=adam&limit=200' })).json();
    assert.ok(byActor.entries.length >= 1 && byActor.entries.every((x: { actor: string }) => x.actor === 'adam'));
    // Who is the start of a name, in any case; LIKE's own characters are plain text.
    const byStart = await (await send(routes, 'GET', '/api/audit', { cookie: vic, query: 'actor=OL&limit=200' })).json();
    assert.ok(byStart.entries.length >= 1 && byStart.entries.every((x: { actor: string }) => x.actor.toLowerCase().startsWith('ol')), JSON.stringify(byStart.entries.map((x: { actor: string }) => x.actor)));
    const wild = await (await send(routes, 'GET', '/api/audit', { cookie: vic, query: 'actor=%25&limit=200' })).json();
    assert.deepEqual(wild.entries, [], '% is not a wildcard');
    const byAction = await (await send(routes, 'GET', '/api/audit', { cookie: vic, query: 'action=queue.pause' })).json();
    assert.equal(byAction.entries.length, 1);
  });
});

const cli = async (args: string[], input = '') => {
  const r = await runCli(args, { input, env: { DATABASE_URL: db.url, REDIS_URL, LEASEHOLD_REDIS_PREFIX: prefix, LEASEHOLD_ACTOR: 'carol' } });
  return { code: r.code, out: r.stdout + r.stderr };
};

describe('the entry is written before the action', () => {
  const who = { actor: 'olga', actorKind: 'user' as const };
  const stateOf = async (action: string) =>
    (await db.pool.query(`SELECT state, changed, skipped, details FROM audit_log WHERE action = $1 ORDER BY audit_id DESC LIMIT 1`, [action])).rows[0];

  test("while the action runs its entry is already there ('started'): a process that dies now leaves it", async () => {
    let seen: unknown;
    await audited(db.pool, who, { action: 'test.inflight' as AuditAction, target: {} }, async () => (seen = await stateOf('test.inflight')), () => ({ changed: 1, skipped: 0 }));
    assert.deepEqual(seen, { state: 'started', changed: 0, skipped: 0, details: {} });
    assert.deepEqual(await stateOf('test.inflight'), { state: 'done', changed: 1, skipped: 0, details: {} });
  });

  test('an entry over more jobs than it keeps ids of counts them all (GET /api/audit: jobCount, and jobIdsKept)', async () => {
    const ids = Array.from({ length: 10_005 }, (_, k) => String(900_000_000 + k));
    await audited(db.pool, who, { action: 'test.many' as AuditAction, target: { all: true } }, async () => null, () => ({ changed: ids.length, skipped: 0, jobIds: ids }));
    const page = await (await send(routes, 'GET', '/api/audit', { cookie: vic, query: 'action=test.many' })).json();
    const e = page.entries[0];
    assert.deepEqual([e.details.jobCount, e.details.jobIdsKept, e.jobIds.length], [10_005, 10_000, 50]);
    await audited(db.pool, who, { action: 'test.few' as AuditAction, target: { all: true } }, async () => null, () => ({ changed: 12, skipped: 0, jobIds: ids.slice(0, 12) }));
    const small = (await (await send(routes, 'GET', '/api/audit', { cookie: vic, query: 'action=test.few' })).json()).entries[0];
    assert.deepEqual([small.details.jobCount, 'jobIdsKept' in small.details], [12, false]);
  });

  test("an action that throws leaves a 'failed' entry with its error, and the error reaches the caller", async () => {
    await assert.rejects(
      audited(db.pool, who, { action: 'test.throws' as AuditAction, target: {} }, async () => { throw new Error('the database went away'); }, () => ({ changed: 1, skipped: 0 })),
      /went away/,
    );
    // Viewers read the log: an internal error's text stays in the server's log.
    assert.deepEqual(await stateOf('test.throws'), { state: 'failed', changed: 0, skipped: 0, details: { error: 'internal error (logged on the server)', countsUnknown: true } });
    await assert.rejects(
      audited(db.pool, who, { action: 'test.unavailable' as AuditAction, target: {} }, async () => { throw new QueueError('unavailable', 'Redis and PostgreSQL are both away'); }, () => ({ changed: 1, skipped: 0 })),
    );
    assert.equal((await stateOf('test.unavailable')).details.error, 'Redis and PostgreSQL are both away', "a QueueError's message is meant for operators");
    // A statement timeout halfway through is the database being busy, as the HTTP answer says, not a bug.
    const timeout = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    await assert.rejects(audited(db.pool, who, { action: 'test.timeout' as AuditAction, target: {} }, async () => { throw timeout; }, () => ({ changed: 1, skipped: 0 })));
    assert.equal((await stateOf('test.timeout')).details.error, 'the database is busy; the statement it was running was rolled back: try again');
  });

  test('an action refused before it changed anything (a 4xx from inside it) leaves no entry', async () => {
    await assert.rejects(
      audited(db.pool, who, { action: 'test.refused' as AuditAction, target: {} }, async () => { throw new QueueError('invalid_request', 'filter: matches too much'); }, () => ({ changed: 1, skipped: 0 })),
      /matches too much/,
    );
    assert.equal(await stateOf('test.refused'), undefined);
    const j = await insertJob(db.pool, { status: 'failed' });
    await entriesOf(0, () => post(olga, '/api/actions/{action}', { action: 'requeue' }, { filter: {} }, 400));
    assert.equal((await db.pool.query('SELECT status FROM jobs WHERE job_id = $1', [j])).rows[0].status, 'failed');
  });

  test('when the entry cannot be written, the action does not run', async () => {
    // A real refusal by PostgreSQL: a connection whose transaction has already failed.
    const client = await db.pool.connect();
    let ran = false;
    try {
      await client.query('BEGIN');
      await client.query('SELECT 1/0').catch(() => {});
      await assert.rejects(audited(client, who, { action: 'test.unwritable' as AuditAction, target: {} }, async () => (ran = true), () => ({ changed: 1, skipped: 0 })), /transaction is aborted/);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    assert.equal(ran, false);
  });

  test("GET /api/audit says when an entry's outcome is unknown", async () => {
    await db.pool.query(`INSERT INTO audit_log (actor, actor_kind, action, target, state) VALUES ('olga', 'user', 'test.unknown', '{}', 'started')`);
    const res = await send(routes, 'GET', '/api/audit', { cookie: vic, query: 'action=test.unknown' });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).entries[0].state, 'started');
  });
});

describe('the command line', () => {
  test('every CLI action leaves one entry with the OS user as a cli actor', { timeout: 180_000 }, async () => {
    const f = await insertJob(db.pool, { status: 'failed', queue: 'cli-audit' });
    const g = await insertJob(db.pool, { status: 'failed', queue: 'cli-audit' });
    const steps: [string[], string, string?][] = [
      [['requeue', f, '--reason', 'cli retry'], 'requeue'],
      [['cancel', f], 'cancel'],
      [['requeue', '--status', 'failed', '--queue', 'cli-audit'], 'bulk.requeue'],
      [['recover'], 'recover'],
      [['queue', 'pause', 'cli-q'], 'queue.pause'],
      [['queue', 'resume', 'cli-q'], 'queue.resume'],
      [['queue', 'limit', 'cli-q', '--concurrency', '2'], 'queue.limits'],
      [['schedule', 'add', 'nightly', '--cron', '0 3 * * *', '--type', 'demo.noop'], 'schedule.add'],
      [['schedule', 'add', 'nightly', '--cron', '0 4 * * *', '--tz', 'Europe/Berlin', '--type', 'demo.noop', '--payload', '{"full":true}'], 'schedule.add'],
      [['schedule', 'run', 'nightly', '--reason', 'run it once more'], 'schedule.run'],
      [['schedule', 'pause', 'nightly'], 'schedule.pause'],
      [['schedule', 'resume', 'nightly'], 'schedule.resume'],
      [['schedule', 'remove', 'nightly'], 'schedule.remove'],
      [['user', 'add', 'newbie', '--role', 'viewer', '--password-stdin'], 'user.add', 'newbie-password-1\n'],
      [['user', 'set', 'newbie', '--role', 'operator', '--reason', 'on call'], 'user.set'],
      [['user', 'disable', 'newbie'], 'user.disable'],
      [['token', 'create', '--name', 'ci-producer', '--scope', 'enqueue'], 'token.create'],
      [['token', 'revoke', 'ci-producer'], 'token.revoke'],
    ];
    for (const [args, action, input] of steps) {
      const e = await one(async () => {
        const r = await cli(args, input);
        assert.equal(r.code, 0, `${args.join(' ')}: exit ${r.code}\n${r.out}`);
      });
      assert.equal(e.action, action, args.join(' '));
      assert.equal(e.actor_kind, 'cli');
      assert.match(e.actor, /^carol@/);
      if (action === 'requeue') assert.deepEqual([e.job_ids, e.reason], [[f], 'cli retry']);
      if (action === 'bulk.requeue') assert.ok(e.job_ids.includes(g) && e.changed >= 1);
      if (action === 'user.set') assert.deepEqual([e.target, e.details, e.reason], [{ user: 'newbie' }, { role: 'operator', from: 'viewer', revokedTokens: [] }, 'on call']);
      // New, then redefined: the entry says which, with the definition it set.
      if (action === 'schedule.add') {
        assert.deepEqual(
          [e.details.created, e.details.cron, e.details.timezone, e.details.changedFrom, e.details.payloadChanged],
          args.includes('--tz') ? [false, '0 4 * * *', 'Europe/Berlin', { cron: '0 3 * * *', timezone: 'UTC' }, true] : [true, '0 3 * * *', 'UTC', undefined, undefined],
        );
      }
      if (action === 'schedule.run') assert.deepEqual([e.job_ids.length, e.changed, e.reason], [1, 1, 'run it once more']);
      if (action === 'schedule.pause' || action === 'schedule.resume') assert.deepEqual([e.target, e.changed], [{ schedule: 'nightly' }, 1]);
    }
    const { rows } = await db.pool.query(`SELECT token_hash FROM api_tokens WHERE name = 'ci-producer'`);
    assert.match(rows[0].token_hash, /^[0-9a-f]{64}$/);
    // reads and dry runs leave none
    await entriesOf(0, async () => {
      for (const args of [['recover', '--dry-run'], ['requeue', '--status', 'failed', '--dry-run'], ['user', 'list'], ['token', 'list'], ['status']]) {
        assert.equal((await cli(args)).code, 0, args.join(' '));
      }
      // and neither does an action refused because what it names does not exist
      for (const args of [
        ['schedule', 'remove', 'no-such-schedule'],
        ['schedule', 'run', 'no-such-schedule'],
        ['schedule', 'pause', 'no-such-schedule'],
        ['schedule', 'resume', 'no-such-schedule'],
        ['user', 'disable', 'nobody-here'],
        ['user', 'set', 'nobody-here', '--role', 'viewer'],
        ['token', 'revoke', 'no-such-token'],
      ]) {
        assert.equal((await cli(args)).code, 1, args.join(' '));
      }
    });
  });
});

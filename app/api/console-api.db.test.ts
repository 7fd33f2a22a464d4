/**
 * The console's API, called with real Requests against real PostgreSQL and Redis: the
 * action endpoints (preview, apply, per-item reasons, "all matching a filter" pinned by
 * maxId, the cap), the live-refresh lookups, the "N new" count, the list's new filters
 * across id windows, the dead letter's groups and the cached stats. Bad input is always
 * a 4xx with {"error":{"code","message"}} and writes nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { getRouteMatcher } from 'next/dist/shared/lib/router/utils/route-matcher.js';
import { getRouteRegex } from 'next/dist/shared/lib/router/utils/route-regex.js';
import { cleanup } from '../../test/cleanup';
import { testDatabase } from '../../test/db';
import { REDIS_URL } from '../../test/env';
import { insertJob, jobRow } from '../../test/factories';
import { uniquePrefix } from '../../test/processes';
import { waitFor } from '../../test/wait';

const db = await testDatabase();
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = uniquePrefix('console');
process.env.LEASEHOLD_ENV = 'test-env';

cleanup(async () => (await import('@/lib/server/context')).closeServerContext());

const actions = await import('./actions/[action]/route');
const jobs = await import('./jobs/route');
const lookup = await import('./jobs/lookup/route');
const newer = await import('./jobs/newer/route');
const deadLetter = await import('./dead-letter/route');
const stats = await import('./stats/route');
const consoleMeta = await import('./console/route');
const workersRoute = await import('./workers/route');
const queueRoute = await import('./queues/[name]/route');
const { applyAction, resolveFilter } = await import('@/lib/queue/bulk');
const { getStats } = await import('@/lib/queue/read');

const act = async (action: string, body: unknown) => {
  const res = await actions.POST(
    new Request(`http://test/api/actions/${action}`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) }),
    { params: Promise.resolve({ action }) },
  );
  return { status: res.status, body: await res.json() };
};
const get = async (fn: (r: Request) => Promise<Response>, path: string) => {
  const res = await fn(new Request(`http://test${path}`));
  return { status: res.status, body: await res.json() };
};
const jobCount = async () => (await db.pool.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n as number;

/** Next's own matcher makes the params from the path (it decodes each segment once); the handler is called with them as Next calls it. */
const queueParams = getRouteMatcher(getRouteRegex('/api/queues/[name]'));
const setQueue = async (name: string, body: object) => {
  const path = `/api/queues/${encodeURIComponent(name)}`;
  const params = queueParams(path);
  assert.ok(params, path);
  const res = await queueRoute.POST(new Request(`http://test${path}`, { method: 'POST', body: JSON.stringify(body) }), {
    params: Promise.resolve(params as { name: string }),
  });
  return { status: res.status, body: await res.json() };
};

describe('POST /api/queues/:name', () => {
  test('a queue is addressed by its exact name, whatever percent signs or slashes it holds', async () => {
    for (const name of ['50%off', 'a%41', '%E2%82%AC', 'a/b', 'mail queue', 'café']) {
      const r = await setQueue(name, { paused: true });
      assert.equal(r.status, 200, `${name}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.queue, name);
      assert.equal(r.body.controls.paused, true);
      const { rows } = await db.pool.query(`SELECT paused_at IS NOT NULL AS paused FROM queues WHERE name = $1`, [name]);
      assert.deepEqual(rows, [{ paused: true }], name);
    }
    const { rows } = await db.pool.query(`SELECT name FROM queues WHERE name IN ('50', 'aA', '€', '50%o')`);
    assert.deepEqual(rows, [], 'no other queue was paused in its place');
  });

  test('a name with space around it is refused (400, nothing written): no job can be in " mail", and "mail" would keep running', async () => {
    for (const name of [' mail', 'mail ', '\tmail']) {
      const r = await setQueue(name, { paused: true });
      assert.equal(r.status, 400, JSON.stringify(name));
      assert.match(r.body.error.message, /queue name: must not start or end with whitespace/);
    }
    const { rows } = await db.pool.query(`SELECT name FROM queues WHERE name <> btrim(name, E' \\t')`);
    assert.deepEqual(rows, []);
  });

  test('the answer says whether anything changed: a pause of a paused queue did not', async () => {
    assert.equal((await setQueue('twice-paused', { paused: true })).body.changed, true);
    const again = await setQueue('twice-paused', { paused: true });
    assert.deepEqual([again.status, again.body.changed, again.body.controls.paused], [200, false, true]);
    assert.equal((await setQueue('twice-paused', { paused: false })).body.changed, true);
  });

  test('a queue with a comma in its name (made before they were refused for new jobs) can still be paused and resumed', async () => {
    assert.equal((await setQueue('legacy,queue', { paused: true })).status, 200);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM queues WHERE name = 'legacy,queue' AND paused_at IS NOT NULL`)).rows[0].n, 1);
    assert.equal((await setQueue('legacy,queue', { paused: false })).status, 200);
  });

  test('a rate period without a rate is refused, not accepted and ignored', async () => {
    const r = await setQueue('period-alone', { paused: false, ratePeriodMs: 5_000 });
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /ratePeriodMs: ratePeriodMs goes with a rateLimit/);
    const { rows } = await db.pool.query(`SELECT 1 FROM queues WHERE name = 'period-alone'`);
    assert.deepEqual(rows, []);
  });
});

describe('POST /api/actions/:action', () => {
  test('a preview changes nothing and says per job what would happen; the action then does it', async () => {
    const failed = await insertJob(db.pool, { status: 'failed', queue: 'act-q', attemptCount: 3, maxAttempts: 3 });
    const running = await insertJob(db.pool, { status: 'running', queue: 'act-q', workerId: 'worker-7', leaseInMs: 41_500 });
    const pre = await act('requeue', { ids: [failed, running], preview: true });
    assert.equal(pre.status, 200);
    assert.equal(pre.body.preview, true);
    assert.equal(pre.body.total, 2);
    assert.equal(pre.body.changed, 1);
    assert.equal(pre.body.skipped, 1);
    assert.deepEqual(pre.body.byStatus, { failed: 1, running: 1 });
    const skip = pre.body.items.find((i: { id: string }) => i.id === running);
    assert.match(skip.reason, /^lease still held by worker-7 for 4[01] s \(revoke the lease to take it back\)$/);
    assert.equal((await jobRow(db.pool, failed)).status, 'failed', 'a preview writes nothing');

    const done = await act('requeue', { ids: [failed, running] });
    assert.equal(done.body.changed, 1);
    assert.equal(done.body.skipped, 1);
    assert.equal(done.body.items[0].id, running, 'skips are listed first');
    assert.match(done.body.items[0].reason, /lease still held by worker-7/);
    assert.equal(done.body.reasons[0].count, 1);
    assert.equal((await jobRow(db.pool, failed)).status, 'queued');
    assert.equal((await jobRow(db.pool, running)).status, 'running', 'a live lease is never taken without revokeLease');

    const revoked = await act('requeue', { ids: [running], revokeLease: true });
    assert.equal(revoked.body.items[0].outcome, 'revoked');
    assert.equal((await jobRow(db.pool, running)).status, 'queued');
  });

  test('"all matching a filter" resolves the filter, and maxId from the preview pins the set', async () => {
    const a = await insertJob(db.pool, { status: 'failed', queue: 'bulk-q', type: 'demo.noop' });
    const b = await insertJob(db.pool, { status: 'failed', queue: 'bulk-q', type: 'demo.noop' });
    await insertJob(db.pool, { status: 'failed', queue: 'other-q', type: 'demo.noop' });
    const pre = await act('delete', { filter: { status: 'failed', queue: 'bulk-q' }, preview: true });
    assert.equal(pre.body.total, 2);
    assert.equal(pre.body.changed, 2);
    assert.ok(pre.body.maxId);
    const late = await insertJob(db.pool, { status: 'failed', queue: 'bulk-q', type: 'demo.noop' });
    const done = await act('delete', { filter: { status: 'failed', queue: 'bulk-q', maxId: pre.body.maxId } });
    assert.equal(done.body.changed, 2);
    assert.equal(await jobRow(db.pool, a), undefined);
    assert.equal(await jobRow(db.pool, b), undefined);
    assert.equal((await jobRow(db.pool, late)).status, 'failed', 'a job created after the preview is not touched');
  });

  test('"all matching a filter": a job older than the preview\'s maxId that fails after it is not touched either', async () => {
    const older = await insertJob(db.pool, { status: 'running', queue: 'pin-q', type: 'demo.noop' });
    const seen = await insertJob(db.pool, { status: 'failed', queue: 'pin-q', type: 'demo.noop' });
    const pre = await act('requeue', { filter: { status: 'failed', queue: 'pin-q' }, preview: true });
    assert.equal(pre.body.total, 1);
    assert.match(pre.body.finishedBy, /^\d+$/);
    // The older job fails now, into the filter, below maxId: the operator never saw it.
    await db.pool.query(`UPDATE jobs SET status = 'failed', lease_expires_at = NULL, finished_at = now() WHERE job_id = $1`, [older]);
    const done = await act('requeue', { filter: { status: 'failed', queue: 'pin-q', maxId: pre.body.maxId, finishedBy: pre.body.finishedBy } });
    assert.deepEqual(done.body.items.map((i: { id: string }) => i.id), [seen]);
    assert.equal((await jobRow(db.pool, older)).status, 'failed');
    assert.equal((await jobRow(db.pool, seen)).status, 'queued');
  });

  test('"all matching a filter": a job that changed between resolving the filter and its batch is left alone, with the reason', async () => {
    // The action resolves the filter, then acts batch by batch: a job requeued, claimed and
    // finished again in between still allows the action, but is not what the filter matched.
    const cases = [
      // delete failed: the failed job was requeued and has since completed (deletable too)
      { action: 'delete', filter: { status: 'failed', queue: 'seen-d' }, before: 'failed', after: 'completed' },
      // requeue failed: requeued, claimed and completed meanwhile (requeueable too)
      { action: 'requeue', filter: { status: 'failed', queue: 'seen-r' }, before: 'failed', after: 'completed' },
      // cancel queued: a worker claimed it meanwhile (a cancel request would stop it)
      { action: 'cancel', filter: { status: 'queued', queue: 'seen-c' }, before: 'queued', after: 'running' },
    ] as const;
    for (const c of cases) {
      const same = await insertJob(db.pool, { status: c.before, queue: c.filter.queue, type: 'demo.noop' });
      const moved = await insertJob(db.pool, { status: c.before, queue: c.filter.queue, type: 'demo.noop' });
      const resolved = await resolveFilter(db.pool, c.filter);
      assert.deepEqual([...resolved.ids].sort(), [same, moved].sort());
      await db.pool.query(
        `UPDATE jobs SET status = $2::job_status, attempt_count = attempt_count + 1, max_attempts = max_attempts + 1,
                         worker_id = 'w2', heartbeat_at = now(), started_at = now(),
                         lease_expires_at = CASE WHEN $2 = 'running' THEN now() + interval '30 s' END,
                         finished_at = CASE WHEN $2 = 'running' THEN NULL ELSE now() END
          WHERE job_id = $1`,
        [moved, c.after],
      );
      const r = await applyAction(db.pool, db.pool, c.action, resolved, {}, {});
      assert.equal(r.changed, 1, `${c.action}: ${JSON.stringify(r.items)}`);
      const skip = r.items.find((i) => i.id === moved)!;
      assert.equal(skip.outcome, 'skipped');
      assert.match(skip.reason!, new RegExp(`^changed since it was selected \\(${c.before}, attempt \\d; now ${c.after}, attempt \\d\\): left alone$`));
      const row = await jobRow(db.pool, moved);
      assert.equal(row.status, c.after, `${c.action} left the changed job as it was`);
      assert.equal(row.cancel_requested_at, null);
    }
  });

  test('"all matching a filter": a failure in flight at the preview\'s moment is waited for and shown, so the action does what the preview said', async () => {
    const seen = await insertJob(db.pool, { status: 'failed', queue: 'flight-q', type: 'demo.noop' });
    const late = await insertJob(db.pool, { status: 'running', queue: 'flight-q', type: 'demo.noop' });
    // A failing transaction that began before the preview (its finished_at is its start)
    // and commits while the preview runs: the pin lets it in, so the preview must list it.
    const tx = await db.pool.connect();
    let open = true;
    try {
      await tx.query('BEGIN');
      await tx.query(`UPDATE jobs SET status = 'failed', lease_expires_at = NULL, finished_at = now() WHERE job_id = $1`, [late]);
      const preview = act('requeue', { filter: { status: 'failed', queue: 'flight-q' }, preview: true });
      await waitFor(
        'the preview waiting for the open failure',
        async () =>
          (
            await db.pool.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()
                  AND query LIKE '%' || 'backend' || '_xid IS NOT NULL' || '%'`, // the preview's look at open transactions (split: not this query)
            )
          ).rows[0].n > 0,
        { intervalMs: 10 },
      );
      await tx.query('COMMIT');
      open = false;
      const pre = await preview;
      assert.deepEqual(pre.body.items.map((i: { id: string }) => i.id).sort(), [seen, late].sort());
      const done = await act('requeue', { filter: { status: 'failed', queue: 'flight-q', maxId: pre.body.maxId, finishedBy: pre.body.finishedBy } });
      assert.equal(done.body.changed, 2);
    } finally {
      if (open) await tx.query('ROLLBACK').catch(() => {});
      tx.release();
    }
  });

  test('a selection given back with `seen` from its preview: a job that changed since is skipped as changed, the rest acted on', async () => {
    const a = await insertJob(db.pool, { status: 'failed', queue: 'seen-ids', type: 'demo.noop' });
    const b = await insertJob(db.pool, { status: 'failed', queue: 'seen-ids', type: 'demo.noop' });
    const pre = await act('requeue', { ids: [a, b], preview: true });
    const seen = pre.body.seen;
    assert.deepEqual(seen, { [a]: { status: 'failed', attempt: 1 }, [b]: { status: 'failed', attempt: 1 } });
    // While the operator reads the preview, b is requeued by someone else and completes.
    await db.pool.query(`UPDATE jobs SET status = 'completed', attempt_count = 2, max_attempts = 4, finished_at = now() WHERE job_id = $1`, [b]);
    const done = await act('requeue', { ids: [a, b], seen });
    assert.equal(done.status, 200);
    assert.equal(done.body.changed, 1);
    const skip = done.body.items.find((i: { id: string }) => i.id === b);
    assert.equal(skip.reason, 'changed since it was selected (failed, attempt 1; now completed, attempt 2): left alone');
    assert.equal((await jobRow(db.pool, b)).status, 'completed');
    assert.equal((await jobRow(db.pool, a)).status, 'queued');
    // Every job of a selection, not only the first ones the preview lists.
    const many: string[] = [];
    for (let i = 0; i < 250; i++) many.push(await insertJob(db.pool, { status: 'failed', queue: 'seen-many', type: 'demo.noop' }));
    const big = await act('delete', { ids: many, preview: true });
    assert.equal(big.body.items.length, 200);
    assert.equal(Object.keys(big.body.seen).length, 250);
  });

  test('cancel and recover report per item; recover previews an expired lease and moves it', async () => {
    const queued = await insertJob(db.pool, { queue: 'act-c' });
    const done = await insertJob(db.pool, { status: 'completed', queue: 'act-c' });
    const c = await act('cancel', { ids: [queued, done] });
    assert.deepEqual(
      c.body.items.map((i: { id: string; outcome: string; reason?: string }) => [i.id, i.outcome, i.reason]),
      [
        [done, 'skipped', 'already completed'],
        [queued, 'cancelled', undefined],
      ],
    );
    const expired = await insertJob(db.pool, { status: 'running', workerId: 'gone-worker', leaseInMs: -5_000 });
    const live = await insertJob(db.pool, { status: 'running', workerId: 'live-worker', leaseInMs: 30_000 });
    const pre = await act('recover', { ids: [expired, live], preview: true });
    assert.equal(pre.body.changed, 1);
    assert.match(pre.body.items.find((i: { id: string }) => i.id === expired).reason, /lease of gone-worker expired [45] s ago → retrying/);
    const r = await act('recover', { ids: [expired, live] });
    assert.equal(r.body.changed, 1);
    assert.match(r.body.items.find((i: { id: string }) => i.id === live).reason, /^lease still held by live-worker for (29|30) s$/);
    assert.equal((await jobRow(db.pool, expired)).status, 'retrying');

    const gone = await insertJob(db.pool, { status: 'running', workerId: 'gone-2', leaseInMs: -2_000 });
    const all = await act('recover', { all: true, preview: true });
    assert.ok(all.body.items.some((i: { id: string }) => i.id === gone));
    const applied = await act('recover', { all: true, expectIds: [gone, live] });
    assert.ok(applied.body.items.some((i: { id: string; outcome: string }) => i.id === gone && i.outcome === 'recovered'));
    assert.ok(applied.body.items.some((i: { id: string; outcome: string }) => i.id === live && i.outcome === 'skipped'));
    // Counted by status as they stood in the preview, and as they are after the run (the dialog's "now:").
    assert.ok(all.body.byStatus.running >= 1);
    assert.equal(applied.body.byStatus.running, undefined, JSON.stringify(applied.body.byStatus));
    assert.ok(applied.body.byStatus.retrying >= 1, JSON.stringify(applied.body.byStatus));
  });

  test('recover over everything: due jobs missing their wake-up signal are listed to re-ring, with their total', async () => {
    const waiting = await insertJob(db.pool, { queue: 'ring-q', type: 'demo.noop', runInMs: -60_000 });
    const pre = await act('recover', { all: true, preview: true });
    assert.ok(pre.body.resignal.some((x: { id: string }) => x.id === waiting), 'inserted behind the doorbell: no id in Redis');
    assert.equal(pre.body.resignalTotal, pre.body.resignal.length);
    assert.equal(pre.body.moreMayChange, false);
    assert.equal(pre.body.recoverLimit, 10_000);
  });

  test('recover over everything: a preview at its listing limit is a lower bound, and the run moves more than it listed', async () => {
    await db.pool.query(
      `INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, worker_id, heartbeat_at, lease_expires_at, run_at, started_at)
       SELECT 'lim-q', 'demo.noop', 'running', '{}'::jsonb, 1, 3, 3, 'gone-lim', now(), now() - interval '5 s', now(), now() FROM generate_series(1, 1001)`,
    );
    const pre = await act('recover', { all: true, preview: true });
    assert.equal(pre.body.changed, 1_000, 'the preview lists 1,000 expired leases of the 1,001');
    assert.equal(pre.body.moreMayChange, true, 'so it says the count is "at least"');
    const done = await act('recover', { all: true, expectIds: pre.body.items.map((i: { id: string }) => i.id) });
    assert.ok(done.body.changed >= 1_001, `the run moved every one (${done.body.changed}), more than the preview counted`);
    assert.equal(done.body.moreMayChange, false, 'below its own limit of 10,000: nothing left');
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'lim-q' AND status = 'running'`);
    assert.equal(rows[0].n, 0);
  });

  test('more jobs than the cap: a clear 400 naming the limit', async () => {
    for (let i = 0; i < 3; i++) await insertJob(db.pool, { status: 'failed', queue: 'cap-q' });
    await assert.rejects(resolveFilter(db.pool, { queue: 'cap-q' }, 2), (e: Error & { code?: string }) => e.code === 'invalid_request' && /more than 2 jobs/.test(e.message));
  });

  const bad: [string, string, unknown, number][] = [
    ['an unknown action', 'explode', { ids: ['1'] }, 404],
    ['no target', 'requeue', {}, 400],
    ['two targets', 'requeue', { ids: ['1'], filter: { status: 'failed' } }, 400],
    ['an empty filter (never "everything")', 'delete', { filter: {} }, 400],
    ['`all` for anything but recover', 'delete', { all: true }, 400],
    ['too many ids', 'cancel', { ids: Array.from({ length: 1001 }, (_, i) => String(i + 1)) }, 400],
    ['a malformed id', 'cancel', { ids: ['1; DROP TABLE jobs'] }, 400],
    ['a bad fingerprint', 'requeue', { filter: { fingerprint: 'xyz' } }, 400],
    ['a bad payload filter', 'requeue', { filter: { payload: 'a..b=1' } }, 400],
    ['an unknown status', 'requeue', { filter: { status: 'lost' } }, 400],
    ['an unknown field', 'requeue', { ids: ['1'], force: true }, 400],
    ['a non-boolean option', 'requeue', { ids: ['1'], resetAttempts: 'yes' }, 400],
    ['malformed JSON', 'requeue', '{"ids": [', 400],
    ['`seen` with a filter', 'requeue', { filter: { status: 'failed' }, seen: { '1': { status: 'failed', attempt: 1 } } }, 400],
    ['`seen` with an unknown status', 'requeue', { ids: ['1'], seen: { '1': { status: 'lost', attempt: 1 } } }, 400],
    ['`seen` with recover', 'recover', { ids: ['1'], seen: { '1': { status: 'running', attempt: 1 } } }, 400],
  ];
  test('the message names the field once: an empty filter, a failed-list place with another list', async () => {
    const empty = await act('delete', { filter: { maxId: '5' } });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.error.message, 'filter: give at least one condition (an action on every job in the table is never implied)');
    const cursor = await get(jobs.GET, '/api/jobs?status=queued&cursor=1700000000000000.5');
    assert.equal(cursor.status, 400);
    assert.equal(cursor.body.error.message, 'cursor: a place in the failed or running list (<microseconds>.<job id>) goes with status=failed or status=running');
    const after = await get(newer.GET, '/api/jobs/newer?queue=q&after=1700000000000000.5');
    assert.equal(after.body.error.message, 'after: a moment (<microseconds>.<job id>) goes with status=failed or status=running');
  });

  for (const [what, action, body, status] of bad) {
    test(`${what}: ${status} with an error body, nothing written`, async () => {
      const before = await jobCount();
      const r = await act(action, body);
      assert.equal(r.status, status, JSON.stringify(r.body));
      assert.equal(typeof r.body.error.code, 'string');
      assert.ok(r.body.error.message.length > 0);
      assert.equal(await jobCount(), before);
    });
  }
});

describe('reads for the console', () => {
  test('a query parameter given twice is a 400 naming it, not the last value taken silently', async () => {
    await insertJob(db.pool, { status: 'queued', queue: 'twice-q' });
    for (const [fn, path, name] of [
      [jobs.GET, '/api/jobs?queue=twice-q&status=queued&status=failed', 'status'],
      [jobs.GET, '/api/jobs?queue=twice-q&queue=other-q', 'queue'],
      [newer.GET, '/api/jobs/newer?after=1&after=2', 'after'],
      [lookup.GET, '/api/jobs/lookup?ids=1&ids=2', 'ids'],
    ] as const) {
      const r = await get(fn, path);
      assert.equal(r.status, 400, path);
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(r.body.error.message, new RegExp(`^${name}: given more than once`), path);
    }
    // Given once, each still works.
    assert.equal((await get(jobs.GET, '/api/jobs?queue=twice-q&status=queued')).body.jobs.length, 1);
  });

  test('list filters: payload key and value, error text, type; ids far apart are found across scan windows', async () => {
    const a = await insertJob(db.pool, { status: 'completed', queue: 'win-q', payload: { account: 42, order: { id: 'o-1' } } });
    // Leave a gap of more than two scan windows in the ids.
    await db.pool.query(`SELECT setval('jobs_job_id_seq', (SELECT max(job_id) FROM jobs) + 250000)`);
    const b = await insertJob(db.pool, { status: 'completed', queue: 'win-q', payload: { account: 7 } });
    const ids = async (qs: string) => (await get(jobs.GET, `/api/jobs?${qs}`)).body.jobs.map((j: { id: string }) => j.id);
    assert.deepEqual(await ids('queue=win-q'), [b, a]);
    assert.deepEqual(await ids('queue=win-q&payload=account%3D42'), [a]);
    assert.deepEqual(await ids('queue=win-q&payload=order.id%3Do-1'), [a]);
    assert.deepEqual(await ids('queue=win-q&payload=order'), [a]);
    const p1 = (await get(jobs.GET, '/api/jobs?queue=win-q&limit=1')).body;
    assert.deepEqual(p1.jobs.map((j: { id: string }) => j.id), [b]);
    assert.deepEqual(await ids(`queue=win-q&limit=1&cursor=${p1.nextCursor}`), [a]);
    for (const qs of ['payload=a..b', 'fingerprint=nothex', 'id=abc', 'maxId=-1']) assert.equal((await get(jobs.GET, `/api/jobs?${qs}`)).status, 400, qs);
    // A value JSON reads as 0 (1e-400) would filter on what was never sent, and an action by
    // that filter would act on the jobs whose value is 0: a 400.
    const tiny = await get(jobs.GET, '/api/jobs?payload=account%3D1e-400');
    assert.equal(tiny.status, 400);
    assert.equal(tiny.body.error.message, 'payload: the value has a number too small for a double (1e-400), which would be read as 0: send it as a string');
  });

  test('lookup returns current rows by id; newer counts jobs above an anchor', async () => {
    const x = await insertJob(db.pool, { queue: 'look-q' });
    const y = await insertJob(db.pool, { queue: 'look-q', status: 'running', workerId: 'w-9', leaseInMs: 20_000 });
    const r = await get(lookup.GET, `/api/jobs/lookup?ids=${x},${y},999999999`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.jobs.map((j: { id: string }) => j.id).sort(), [x, y].sort());
    const running = r.body.jobs.find((j: { id: string }) => j.id === y);
    assert.ok(running.leaseRemainingMs > 15_000 && running.leaseRemainingMs <= 20_000);
    assert.ok(Date.parse(r.body.dbNow) > 0);
    assert.deepEqual((await get(newer.GET, `/api/jobs/newer?queue=look-q&after=${x}`)).body, { count: 1, capped: false });
    assert.equal((await get(lookup.GET, `/api/jobs/lookup?ids=${Array.from({ length: 201 }, (_, i) => i + 1).join(',')}`)).status, 400);
    assert.equal((await get(newer.GET, '/api/jobs/newer?queue=look-q')).status, 400, 'after is required');
  });

  test('newer above the largest id answers 0 (the scan window stops at the top of bigint, no overflow)', async () => {
    await insertJob(db.pool, { queue: 'top-q' });
    for (const after of ['9223372036854775807', '9223372036854775806', '9223372036854700000']) {
      assert.deepEqual(await get(newer.GET, `/api/jobs/newer?after=${after}&queue=top-q`), { status: 200, body: { count: 0, capped: false } }, after);
    }
  });

  test('the dead letter groups failed jobs by type and error shape, and the group filters the list', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await insertJob(db.pool, { status: 'failed', type: 'demo.noop', queue: 'dl-q' });
      await db.pool.query(`UPDATE jobs SET error = $2 WHERE job_id = $1`, [id, `SMTP 421: mailbox busy for user${i}@example.com`]);
      ids.push(id);
    }
    const d = await get(deadLetter.GET, '/api/dead-letter');
    const g = d.body.groups.find((x: { pattern: string }) => x.pattern.startsWith('SMTP # mailbox busy for #'));
    assert.ok(g, JSON.stringify(d.body.groups));
    assert.equal(g.count, 3);
    assert.equal(g.type, 'demo.noop');
    const listed = (await get(jobs.GET, `/api/jobs?status=failed&fingerprint=${g.fingerprint}`)).body.jobs.map((j: { id: string }) => j.id);
    assert.deepEqual(listed, [...ids].reverse());
  });

  test('the dead letter samples the latest failures, not the highest ids, and lists the group that failed last first', async () => {
    const { deadLetterGroups } = await import('@/lib/queue/dead-letter');
    // An old job (the lowest id of the three) requeued long after and failing now, and two
    // newer jobs that failed before it: a sample of two must hold the old one.
    const failedAt = async (error: string, inMinutes: number) => {
      const id = await insertJob(db.pool, { status: 'failed', type: 'demo.noop', queue: 'dl-latest' });
      await db.pool.query(`UPDATE jobs SET error = $2, finished_at = now() + $3::int * interval '1 minute' WHERE job_id = $1`, [id, error, inMinutes]);
      return id;
    };
    const fresh = await failedAt('fresh incident: the payment gateway refused', 120);
    const older = await failedAt('older trouble: the mail relay timed out', 60);
    await failedAt('oldest noise: a disk filled up', 30);
    const d = await deadLetterGroups(db.pool, 2);
    assert.deepEqual(
      d.groups.map((g) => [g.pattern, g.sampleJobId]),
      [
        ['fresh incident: the payment gateway refused', fresh],
        ['older trouble: the mail relay timed out', older],
      ],
    );
    assert.deepEqual([d.examined, d.complete], [2, false]);
  });

  test('errors carrying a random base64 value (a signature, a token) fall into one group, its + and / included', async () => {
    const { randomBytes } = await import('node:crypto');
    for (let i = 0; i < 4; i++) {
      const id = await insertJob(db.pool, { status: 'failed', type: 'demo.noop', queue: 'dl-b64' });
      const value = randomBytes(90).toString(i % 2 ? 'base64' : 'base64url');
      await db.pool.query(`UPDATE jobs SET error = $2 WHERE job_id = $1`, [id, `invalid signature for payload ${value}`]);
    }
    (await import('@/lib/server/read-cache')).readCache.clear(); // the groups are shared for 3 s
    const d = await get(deadLetter.GET, '/api/dead-letter');
    const groups = d.body.groups.filter((x: { pattern: string }) => x.pattern.startsWith('invalid signature for payload'));
    assert.deepEqual(
      groups.map((g: { pattern: string; count: number }) => [g.pattern, g.count]),
      [['invalid signature for payload #', 4]],
    );
  });

  test('a running job whose worker its supervisor saw die says so, in the list, the lookup and the detail', async () => {
    await db.pool.query(
      `INSERT INTO workers (worker_id, host, pid, queues, concurrency, started_at, heartbeat_at, stopped_at, exit) VALUES
         ('gone-host:1:aa', 'gone-host', 1, '{gone-q}', 1, now(), now(), now(), 'killed by SIGKILL'),
         ('live-host:2:bb', 'live-host', 2, '{gone-q}', 1, now(), now(), NULL, NULL)`,
    );
    const orphan = await insertJob(db.pool, { status: 'running', queue: 'gone-q', workerId: 'gone-host:1:aa', leaseInMs: 20_000 });
    const held = await insertJob(db.pool, { status: 'running', queue: 'gone-q', workerId: 'live-host:2:bb', leaseInMs: 20_000 });
    const done = await insertJob(db.pool, { status: 'completed', queue: 'gone-q', workerId: 'gone-host:1:aa' });
    const listed = (await get(jobs.GET, '/api/jobs?queue=gone-q&fresh=1')).body.jobs as { id: string; ownerGone: string | null }[];
    assert.deepEqual(
      Object.fromEntries(listed.map((j) => [j.id, j.ownerGone])),
      { [orphan]: 'killed by SIGKILL', [held]: null, [done]: null },
    );
    const found = (await get(lookup.GET, `/api/jobs/lookup?ids=${orphan},${held}`)).body.jobs as { id: string; ownerGone: string | null }[];
    assert.deepEqual(found.map((j) => j.ownerGone).sort(), ['killed by SIGKILL', null].sort());
    const one = await import('./jobs/[id]/route');
    const res = await one.GET(new Request(`http://test/api/jobs/${orphan}`), { params: Promise.resolve({ id: orphan }) });
    assert.equal((await res.json()).job.ownerGone, 'killed by SIGKILL');
  });

  test('stats: exact counts per status and queue, labelled, with the Redis backlog per queue', async () => {
    await insertJob(db.pool, { queue: 'stats-q' });
    // Schedules whose due tick cannot be enqueued are counted (enabled ones only).
    await db.pool.query(
      `INSERT INTO schedules (name, cron, type, next_run_at, enabled, last_error, last_error_at)
       VALUES ('stats-failing', '* * * * *', 'demo.noop', now(), true, 'refused', now()),
              ('stats-failing-off', '* * * * *', 'demo.noop', now(), false, 'refused', now()),
              ('stats-fine', '* * * * *', 'demo.noop', now(), true, NULL, NULL)`,
    );
    // Schedules run one at a time whose latest tick was skipped, the run it met still
    // unfinished, are counted: not one whose run came after the skip, one whose blocking run has
    // finished since, a paused one, nor one switched back to 'allow'.
    const waiting = await insertJob(db.pool, { queue: 'stats-skip', status: 'queued' });
    const running = await insertJob(db.pool, { queue: 'stats-skip', status: 'running' });
    const done = await insertJob(db.pool, { queue: 'stats-skip', status: 'completed' });
    await db.pool.query(
      `INSERT INTO schedules (name, cron, type, next_run_at, enabled, paused_at, overlap, last_run_at, last_skipped_at, last_skipped_job_id)
       VALUES ('stats-skipping', '* * * * *', 'demo.noop', now(), true, NULL, 'skip', now() - interval '2 min', now() - interval '1 min', $1),
              ('stats-skipping-no-run', '* * * * *', 'demo.noop', now(), true, NULL, 'skip', NULL, now() - interval '1 min', $2),
              ('stats-skipped-run-finished', '* * * * *', 'demo.noop', now(), true, NULL, 'skip', NULL, now() - interval '1 min', $3),
              ('stats-skipped-then-ran', '* * * * *', 'demo.noop', now(), true, NULL, 'skip', now() - interval '1 min', now() - interval '2 min', $1),
              ('stats-skipping-paused', '* * * * *', 'demo.noop', now(), true, now(), 'skip', NULL, now() - interval '1 min', $1),
              ('stats-skipping-allow', '* * * * *', 'demo.noop', now(), true, NULL, 'allow', NULL, now() - interval '1 min', $1)`,
      [waiting, running, done],
    );
    const s = (await get(stats.GET, '/api/stats')).body;
    const cliStats = await getStats(db.pool, { aliveWithinMs: 30_000 });
    await db.pool.query(`DELETE FROM schedules WHERE name LIKE 'stats-%'`);
    assert.equal(s.schedulesFailing, 1);
    assert.equal(s.schedulesSkipping, 2);
    assert.deepEqual([cliStats.schedulesFailing, cliStats.schedulesSkipping], [1, 2], "the CLI's read counts them alike");
    assert.equal(s.kinds.queued, 'exact');
    assert.equal(s.totalKind, 'exact');
    const total = (await db.pool.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n;
    assert.equal(s.total, total);
    const q = s.queues.find((x: { queue: string }) => x.queue === 'stats-q');
    assert.equal(q.counts.queued, 1);
    assert.equal(q.kinds.queued, 'exact');
    assert.equal(q.due, 1);
    assert.equal(q.signalBacklog, 0, 'inserted behind the doorbell: nothing in Redis for it');
    assert.equal(s.signal.usingRedis, true);
    assert.ok(Array.isArray(s.throughput.points));
    // The old shape still holds (the CLI and scripts read it).
    assert.equal(typeof s.counts.completed, 'number');
    assert.equal(typeof s.oldestQueuedAgeMs, 'number');
  });

  test("an operator's action shows on the next stats read, though the snapshot is shared for its interval", async () => {
    await insertJob(db.pool, { queue: 'pause-stats-q' });
    const paused = async () => {
      const s = (await get(stats.GET, '/api/stats')).body;
      return s.queues.find((x: { queue: string }) => x.queue === 'pause-stats-q')?.controls?.paused ?? false;
    };
    assert.equal(await paused(), false); // the snapshot now held, for at least MIN_REFRESH_MS
    assert.equal((await setQueue('pause-stats-q', { paused: true })).status, 200);
    assert.equal(await paused(), true, 'the pause shows at once, not after the refresh interval');
    assert.equal((await setQueue('pause-stats-q', { paused: false })).status, 200);
    assert.equal(await paused(), false);
  });

  test('console meta: the environment badge and lease settings', async () => {
    const m = (await get(consoleMeta.GET as never, '/api/console')).body;
    assert.equal(m.environment, 'test-env');
    assert.equal(typeof m.leaseMs, 'number');
  });

  test('the workers list: the live ones and the latest ended, at most WORKERS_LISTED, beside how many are on file', async () => {
    const { readCache } = await import('@/lib/server/read-cache');
    const { WORKERS_LISTED } = await import('@/lib/queue/read');
    const onFile = async () => (await db.pool.query(`SELECT count(*)::int AS n FROM workers`)).rows[0].n as number;
    const read = async () => {
      readCache.clear(); // the list is shared for a second
      return (await get(workersRoute.GET as never, '/api/workers')).body as { workers: { workerId: string }[]; total: number };
    };
    // A crash loop's week: more ended incarnations than the list holds, and one live process.
    await db.pool.query(
      `INSERT INTO workers (worker_id, host, pid, queues, concurrency, started_at, heartbeat_at, stopped_at, exit)
       SELECT 'wl-ended:' || g, 'wl', g, '{wl}', 1, now() - g * interval '1 min' - interval '5 s', now() - g * interval '1 min', now() - g * interval '1 min', 'killed by SIGKILL'
         FROM generate_series(1, ${WORKERS_LISTED} + 20) g`,
    );
    await db.pool.query(`INSERT INTO workers (worker_id, host, pid, queues, concurrency) VALUES ('wl-live:1', 'wl', 1, '{wl}', 1)`);
    try {
      const full = await read();
      const ids = full.workers.map((w) => w.workerId);
      assert.equal(ids.length, WORKERS_LISTED);
      assert.equal(full.total, await onFile(), 'every row on file is counted');
      assert.ok(full.total > ids.length);
      assert.ok(ids.includes('wl-live:1') && ids.includes('wl-ended:1'), 'the live one and the latest ended are listed');
      assert.ok(!ids.includes(`wl-ended:${WORKERS_LISTED + 20}`), 'the earliest ended is the one left out');
      await db.pool.query(`DELETE FROM workers WHERE worker_id LIKE 'wl-ended:%' AND split_part(worker_id, ':', 2)::int > 10`);
      const short = await read();
      assert.equal(short.total, short.workers.length, 'a list that holds every row says as many');
    } finally {
      await db.pool.query(`DELETE FROM workers WHERE host = 'wl'`);
    }
  });

  test("the console's pools run with JIT off and the reads with a statement timeout (set when a connection opens, no startup option a pooler would refuse)", async () => {
    const { serverContext } = await import('@/lib/server/context');
    const { readPool, pool } = serverContext();
    for (const p of [readPool, pool]) {
      const { rows } = await p.query(`SELECT current_setting('jit') AS jit`);
      assert.equal(rows[0].jit, 'off');
    }
    // The reads' statement_timeout, set the same way.
    const { rows } = await readPool.query(`SELECT current_setting('statement_timeout') AS t`);
    assert.equal(rows[0].t, '5s');
    await assert.rejects(readPool.query('SELECT pg_sleep(6)'), /statement timeout/);
  });
});

const jobRoute = await import('./jobs/[id]/route');
const { queueSetControls, workerRegister } = await import('@/lib/queue/ops');

describe('GET /api/jobs/:id', () => {
  const detail = async (id: string) => {
    const res = await jobRoute.GET(new Request(`http://test/api/jobs/${id}?payload=0`), { params: Promise.resolve({ id }) });
    assert.equal(res.status, 200);
    return res.json();
  };
  const register = (queue: string, types: string[] | null) =>
    workerRegister(db.pool, { workerId: uniquePrefix('w'), host: 'test', pid: 1, queues: [queue], concurrency: 1, types });
  // The worker counts alone (the sweep's age has a test of its own below).
  const counts = async (id: string) => {
    const { sweptAgoMs, sweepStaleAfterMs, ...rest } = (await detail(id)).workers;
    assert.equal(typeof sweepStaleAfterMs, 'number');
    assert.ok(sweptAgoMs === null || typeof sweptAgoMs === 'number');
    return rest;
  };

  test('a waiting job says how many live workers serve its queue and how many of them have its handler', async () => {
    const queue = uniquePrefix('handlers');
    const id = await insertJob(db.pool, { queue, type: 'demo.noop' });
    const first = await counts(id);
    const base = first.anywhere as number; // live workers of other tests in this database
    assert.deepEqual(first, { onQueue: 0, withHandler: 0, anywhere: base, queuePaused: false, queueControlled: false });
    await register(queue, ['other.type']);
    assert.deepEqual(await counts(id), { onQueue: 1, withHandler: 0, anywhere: base + 1, queuePaused: false, queueControlled: false });
    await register(queue, ['demo.noop', 'other.type']);
    // A worker of an earlier version (no types recorded) claimed any type.
    await register(queue, null);
    assert.deepEqual(await counts(id), { onQueue: 3, withHandler: 2, anywhere: base + 3, queuePaused: false, queueControlled: false });
    await register(uniquePrefix('elsewhere'), ['demo.noop']);
    assert.deepEqual(await counts(id), { onQueue: 3, withHandler: 2, anywhere: base + 4, queuePaused: false, queueControlled: false }, 'a worker of another queue counts only as a sweeper');
    await queueSetControls(db.pool, { name: queue, paused: true });
    assert.equal((await detail(id)).workers.queuePaused, true, 'and a paused queue says so');
    const running = await insertJob(db.pool, { queue, type: 'demo.noop', status: 'running', leaseInMs: -1_000 });
    assert.equal((await detail(running)).workers.anywhere, base + 4, 'a running job: who would recover it');
    const done = await insertJob(db.pool, { queue, type: 'demo.noop', status: 'completed' });
    assert.equal((await detail(done)).workers, undefined, 'not for a finished job');
  });

  // A claim takes over an expired lease only on a queue that is neither paused nor limited
  // (jobClaimExpired): on such a queue, only the sweep moves it on, and the job's page must
  // not promise otherwise while the sweep has stopped.
  test('a job says whether its queue is controlled (paused or limited), where no claim takes over an expired lease', async () => {
    const queue = uniquePrefix('controlled');
    const running = await insertJob(db.pool, { queue, type: 'demo.noop', status: 'running', leaseInMs: -1_000 });
    assert.equal((await detail(running)).workers.queueControlled, false);
    await queueSetControls(db.pool, { name: queue, concurrencyLimit: 2 });
    const limited = (await detail(running)).workers;
    assert.deepEqual([limited.queuePaused, limited.queueControlled], [false, true], 'limited, not paused');
  });

  test("a running job's page says how long ago the recover sweep ran, and past what it has stopped (as the stats)", async () => {
    const running = await insertJob(db.pool, { queue: uniquePrefix('swept'), type: 'demo.noop', status: 'running', leaseInMs: -1_000 });
    // No worker of this file sweeps: the record is what the test writes.
    await db.pool.query(`UPDATE recover_sweep SET swept_at = now() - interval '10 minutes'`);
    const w = (await detail(running)).workers;
    assert.ok(w.sweptAgoMs >= 600_000 && w.sweptAgoMs < 660_000, `swept ${w.sweptAgoMs} ms ago`);
    assert.equal(w.sweepStaleAfterMs, 60_000, 'ten sweep intervals (5 s), a minute at the least');
    await db.pool.query(`UPDATE recover_sweep SET swept_at = now()`);
    assert.ok((await detail(running)).workers.sweptAgoMs < 60_000);
  });
});

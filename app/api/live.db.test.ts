/**
 * GET /api/live against real PostgreSQL and Redis: one stream carries what a console page
 * watches, with the polling routes' bodies, and shows a change; bad queries are a 400
 * that opens nothing; a client that goes away closes its stream.
 */
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, test } from 'node:test';
import { cleanup } from '../../test/cleanup';
import { testDatabase } from '../../test/db';
import { REDIS_URL } from '../../test/env';
import { insertJob } from '../../test/factories';
import { uniquePrefix } from '../../test/processes';
import { SseReader } from '../../test/sse';

const db = await testDatabase();
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = uniquePrefix('live');

cleanup(async () => (await import('@/lib/server/context')).closeServerContext());

const live = await import('./live/route');
const lookup = await import('./jobs/lookup/route');
const newer = await import('./jobs/newer/route');
const stats = await import('./stats/route');
const jobDetail = await import('./jobs/[id]/route');
const cancelRoute = await import('./jobs/[id]/cancel/route');
const audit = await import('./audit/route');
const workersRoute = await import('./workers/route');
const { jobCancel } = await import('@/lib/queue/ops');
const { openLiveStreams } = await import('@/lib/server/live');
const { MAX_LIVE_STREAMS } = await import('@/lib/http/schemas');

/** A full garbage collection (the test runner starts node without --expose-gc). */
const collectGarbage = (() => {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
})();
const open = (query: string, signal?: AbortSignal) => live.GET(new Request(`http://test/api/live?${query}`, { signal }));
const getJson = async (fn: (r: Request) => Promise<Response>, path: string) => (await fn(new Request(`http://test${path}`))).json();
/** A job row without what moves with the clock. */
const still = ({ dbNow: _d, leaseRemainingMs: _l, ...row }: Record<string, unknown>) => row;

describe('GET /api/live', () => {
  test('one stream carries the stats, the rows and the "N new" count, as the polling routes answer them, and shows a change', async () => {
    const a = await insertJob(db.pool, { queue: 'live-q', runInMs: 3_600_000 });
    const b = await insertJob(db.pool, { queue: 'live-q', status: 'running', workerId: 'live-w' });
    const res = await open(`stats=1&ids=${b},${a}&after=${a}&queue=live-q&every=1000`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/event-stream/);
    assert.match(res.headers.get('cache-control')!, /no-transform/, 'compression must not hold events back');
    const sse = new SseReader(res.body!);
    try {
      const first = [await sse.next(), await sse.next(), await sse.next()];
      assert.deepEqual(first.map((e) => e!.event), ['stats', 'lookup', 'newer']);
      const [s, rows, count] = first.map((e) => JSON.parse(e!.data));
      const polled = await getJson(stats.GET, '/api/stats');
      assert.deepEqual(Object.keys(s).sort(), Object.keys(polled).sort(), 'the stats event is the body of GET /api/stats');
      assert.ok(s.counts.queued >= 1 && s.counts.running >= 1);
      const polledRows = await getJson(lookup.GET, `/api/jobs/lookup?ids=${b},${a}`);
      assert.deepEqual(rows.jobs.map(still), polledRows.jobs.map(still), 'the lookup event is the body of GET /api/jobs/lookup');
      assert.deepEqual(rows.jobs.map((j: { id: string; status: string }) => [j.id, j.status]), [[b, 'running'], [a, 'queued']]);
      assert.deepEqual(count, await getJson(newer.GET, `/api/jobs/newer?after=${a}&queue=live-q`));
      assert.deepEqual(count, { count: 1, capped: false });

      // Changes show in the next events (the reads are shared for a second).
      await jobCancel(db.pool, { ids: [a] });
      await insertJob(db.pool, { queue: 'live-q' });
      await sse.until((e) => e.event === 'lookup' && JSON.parse(e.data).jobs.find((j: { id: string }) => j.id === a)?.status === 'cancelled');
      await sse.until((e) => e.event === 'newer' && JSON.parse(e.data).count === 2);
    } finally {
      await sse.cancel();
    }
  });

  test("a job page's stream carries the job with its attempts and its audit entries, the workers page's the workers, as the polling routes answer them", async () => {
    const id = await insertJob(db.pool, { queue: 'live-job', status: 'running', workerId: 'live-w2' });
    const params = { params: Promise.resolve({ id }) };
    const res = await open(`job=${id}&workers=1&every=1000`);
    assert.equal(res.status, 200);
    const sse = new SseReader(res.body!);
    try {
      const first = [await sse.next(), await sse.next(), await sse.next()];
      assert.deepEqual(first.map((e) => e!.event), ['job', 'audit', 'workers']);
      const [detail, entries, workers] = first.map((e) => JSON.parse(e!.data));
      const polled = await (await jobDetail.GET(new Request(`http://test/api/jobs/${id}?payload=0`), params)).json();
      // What moves with the clock between the two reads: the read's time, the lease left, the sweep's age.
      const moving = (d: { job: Record<string, unknown>; dbNow?: string; workers?: Record<string, unknown> }) => ({
        ...d,
        job: still(d.job),
        dbNow: undefined,
        workers: d.workers && { ...d.workers, sweptAgoMs: typeof d.workers.sweptAgoMs },
      });
      assert.deepEqual(moving(detail), moving(polled), 'the job event is the body of GET /api/jobs/:id?payload=0');
      // Without the payload, which never changes (the page reads it once): up to a megabyte a tick otherwise.
      assert.deepEqual([detail.payloadText, detail.job.payload, detail.payloadOmitted], [null, null, true]);
      const full = await (await jobDetail.GET(new Request(`http://test/api/jobs/${id}`), params)).json();
      assert.equal(typeof full.payloadText, 'string');
      assert.equal(full.payloadOmitted, undefined);
      assert.deepEqual(moving({ ...full, payloadText: null, payloadOmitted: true, job: { ...full.job, payload: null } }), moving(polled), 'the rest is the same');
      assert.equal(detail.job.status, 'running');
      assert.equal(detail.attempts.length, 1);
      assert.deepEqual(entries, await getJson(audit.GET, `/api/audit?jobId=${id}`), 'the audit event is the body of GET /api/audit?jobId=');
      assert.deepEqual(entries.entries, []);
      const polledWorkers = await getJson(workersRoute.GET, '/api/workers');
      assert.deepEqual({ ...workers, dbNow: undefined }, { ...polledWorkers, dbNow: undefined }, 'the workers event is the body of GET /api/workers');

      // An operator's cancel shows in the next events: the request on the job, and its audit entry.
      const cancelled = await cancelRoute.POST(new Request(`http://test/api/jobs/${id}/cancel`, { method: 'POST' }), params);
      assert.equal(cancelled.status, 200);
      await sse.until((e) => e.event === 'job' && JSON.parse(e.data).job.cancelRequestedAt !== null);
      const entry = await sse.until((e) => e.event === 'audit' && JSON.parse(e.data).entries.length === 1);
      assert.equal(JSON.parse(entry!.data).entries[0].action, 'cancel');
    } finally {
      await sse.cancel();
    }
  });

  test('a job that is not there sends a problem event with the 404 body (the page polls and shows it)', async () => {
    const res = await open('job=987654321&every=1000');
    assert.equal(res.status, 200);
    const sse = new SseReader(res.body!);
    try {
      const e = await sse.next();
      assert.equal(e!.event, 'problem');
      assert.equal(JSON.parse(e!.data).error.code, 'not_found');
    } finally {
      await sse.cancel();
    }
  });

  test('bad queries answer 400 with an error body, and open no stream', async () => {
    const before = openLiveStreams();
    for (const query of ['', 'every=1000', 'queue=live-q&stats=1', 'ids=1,x', `ids=${Array.from({ length: 201 }, (_, k) => k + 1).join(',')}`, 'stats=1&every=10', 'stats=yes', 'stats=1&drop=table', 'job=abc', 'job=0', 'workers=yes', 'job=1&queue=x', "after=1&queue=%27%3B%20DROP%20TABLE%20jobs%3B--%00"]) {
      const res = await open(query);
      assert.ok(res.status === 400, `?${query} → ${res.status}`);
      const body = await res.json();
      assert.equal(body.error.code, 'invalid_request', `?${query}`);
      assert.equal(typeof body.error.message, 'string');
    }
    assert.equal(openLiveStreams(), before);
  });

  test('a HEAD answers the headers and opens no stream; an empty filter filters nothing, as on GET /api/jobs', async () => {
    const before = openLiveStreams();
    for (let k = 0; k < 20; k++) {
      const res = await live.GET(new Request('http://test/api/live?stats=1', { method: 'HEAD' }));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(res.body, null);
    }
    assert.equal(openLiveStreams(), before, 'no slot held by a stream nobody reads');
    const res = await open('after=1&queue=&type=&every=60000');
    assert.equal(res.status, 200);
    await new SseReader(res.body!).cancel();
    assert.equal((await newer.GET(new Request('http://test/api/jobs/newer?after=1&queue=&status='))).status, 200);
  });

  test(`past ${MAX_LIVE_STREAMS} open streams a console answers 503 (the page polls), and takes new ones as streams close`, async () => {
    const streams: SseReader[] = [];
    try {
      while (openLiveStreams() < MAX_LIVE_STREAMS) {
        const res = await open('stats=1&every=60000');
        assert.equal(res.status, 200);
        streams.push(new SseReader(res.body!));
      }
      const refused = await open('stats=1&every=60000');
      assert.equal(refused.status, 503);
      assert.equal((await refused.json()).error.code, 'unavailable');
      // When a place is free at the latest: the first stream's 60 s, then its next tick (60 s apart).
      const retryAfter = Number(refused.headers.get('retry-after'));
      assert.ok(Number.isInteger(retryAfter) && retryAfter > 60 && retryAfter <= 120, `Retry-After: ${refused.headers.get('retry-after')}`);
      await streams.pop()!.cancel();
      const again = await open('stats=1&every=60000');
      assert.equal(again.status, 200);
      streams.push(new SseReader(again.body!));
    } finally {
      await Promise.all(streams.map((s) => s.cancel()));
    }
    assert.equal(openLiveStreams(), 0);
  });

  test('a client that goes away closes its stream, even once nothing else holds its Request', async () => {
    const gone = new AbortController();
    const res = await open('stats=1&every=1000', gone.signal);
    const sse = new SseReader(res.body!);
    assert.equal((await sse.next())!.event, 'stats');
    assert.equal(openLiveStreams(), 1);
    // The route listens on the Request's own signal, which follows the client's only while
    // the Request object lives (undici links them weakly): collected, it missed the abort and
    // the stream stayed open (seen once in CI). The route holds it as long as the stream.
    collectGarbage();
    gone.abort();
    assert.equal(openLiveStreams(), 0);
  });
});

/** The live feed's stream (lib/server/live.ts), read as a browser would: events, problems, the planned end, a reader gone or behind. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SseReader } from '../../test/sse';
import { QueueError } from '../queue/errors';
import { liveStream, openLiveStreams } from './live';

const counter = () => {
  const c = { reads: 0, read: async () => ({ n: ++c.reads }) };
  return c;
};
/** Lets timers and the stream's pulls run for about `ms` (only to show that something did NOT happen). */
const idle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('liveStream', () => {
  test('starts with retry, then sends every topic, and again every interval', async () => {
    const a = counter();
    const b = counter();
    const sse = new SseReader(liveStream([{ event: 'a', read: a.read }, { event: 'b', read: b.read }], { everyMs: 30, maxMs: 60_000 }));
    assert.deepEqual(await sse.next(), { event: 'a', data: '{"n":1}' });
    assert.equal(sse.retryMs, 2000);
    assert.deepEqual(await sse.next(), { event: 'b', data: '{"n":1}' });
    await sse.until((e) => e.event === 'b' && JSON.parse(e.data).n === 3);
    assert.equal(openLiveStreams(), 1);
    await sse.cancel();
    assert.equal(openLiveStreams(), 0, 'cancelled by its reader: closed');
  });

  test('a read that fails sends `problem` with the body a request would get, and the stream goes on', async () => {
    let k = 0;
    const flaky = async () => {
      k++;
      if (k === 1) throw new QueueError('unavailable', 'the database is busy or unreachable; try again');
      if (k === 2) throw new Error('relation "jobs" does not exist at 10.0.0.5');
      if (k === 3) return { n: 1n }; // an answer JSON cannot carry
      return { ok: true };
    };
    const sse = new SseReader(liveStream([{ event: 'stats', read: flaky }], { everyMs: 20, maxMs: 60_000 }));
    assert.deepEqual(JSON.parse((await sse.next())!.data), { error: { code: 'unavailable', message: 'the database is busy or unreachable; try again' } });
    const internal = await sse.next();
    assert.equal(internal!.event, 'problem');
    assert.deepEqual(JSON.parse(internal!.data), { error: { code: 'internal', message: 'internal error (logged on the server)' } }, 'no internals leak');
    assert.equal((await sse.next())!.event, 'problem', 'an answer that cannot be sent is a problem too');
    assert.deepEqual(await sse.next(), { event: 'stats', data: '{"ok":true}' });
    await sse.cancel();
  });

  test('a value that asks for the next tick sooner (an old stats snapshot) gets it sooner than the interval', async () => {
    const a = counter();
    // An interval of ten minutes: the second event can only come from the sooner tick.
    const sse = new SseReader(liveStream([{ event: 'a', read: a.read, nextWithinMs: (v) => ((v as { n: number }).n === 1 ? 20 : false) }], { everyMs: 600_000, maxMs: 3_600_000 }));
    assert.deepEqual(await sse.next(), { event: 'a', data: '{"n":1}' });
    assert.deepEqual(await sse.until((e) => e.event === 'a'), { event: 'a', data: '{"n":2}' });
    await sse.cancel();
  });

  test('after maxMs it says bye and ends', async () => {
    const a = counter();
    const sse = new SseReader(liveStream([{ event: 'a', read: a.read }], { everyMs: 20, maxMs: 100 }));
    const bye = await sse.until((e) => e.event === 'bye');
    assert.deepEqual(JSON.parse(bye.data), { reason: 'reconnect' });
    assert.equal(await sse.next(), null, 'the stream ended');
    assert.equal(openLiveStreams(), 0);
  });

  test('the request going away ends the stream and its reads', async () => {
    const a = counter();
    const gone = new AbortController();
    const sse = new SseReader(liveStream([{ event: 'a', read: a.read }], { everyMs: 20, maxMs: 60_000, signal: gone.signal }));
    await sse.until((e) => JSON.parse(e.data).n === 2);
    // Keep reading, so the stream is never merely skipped for a reader that is behind.
    const drained = (async () => {
      while (await sse.next());
    })();
    gone.abort();
    assert.equal(openLiveStreams(), 0);
    await drained; // the stream ended
    const readsThen = a.reads;
    await idle(200);
    assert.equal(a.reads, readsThen, 'no read after the abort');
    const aborted = new AbortController();
    aborted.abort();
    const never = new SseReader(liveStream([{ event: 'a', read: a.read }], { everyMs: 20, maxMs: 60_000, signal: aborted.signal }));
    assert.equal(await never.next(), null, 'a request already gone gets an ended stream');
  });

  test('a reader that does not keep up is skipped, not queued for', async () => {
    const a = counter();
    const sse = new SseReader(liveStream([{ event: 'a', read: a.read }], { everyMs: 10, maxMs: 60_000 }));
    assert.equal(JSON.parse((await sse.next())!.data).n, 1);
    // One event may wait for the reader; past that, nothing is read or queued while it does not read.
    await idle(300);
    assert.ok(a.reads <= 2, `reads while nobody read: ${a.reads}`);
    const next = JSON.parse((await sse.next())!.data).n;
    assert.ok(next <= 2, `the reader gets the waiting event, not a backlog (${next})`);
    await sse.until((e) => JSON.parse(e.data).n >= 4);
    await sse.cancel();
  });
});

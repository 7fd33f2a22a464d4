/**
 * The shared list cache: viewers asking for the same thing within its second share one
 * read (also one in flight), a failed read is not kept, a cleared cache reads again, and
 * an answer says how old it is.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { waitFor } from '../../test/wait';
import { ReadCache } from './read-cache';

function counted<T>(value: T) {
  const load = { calls: 0, fn: async () => (load.calls++, value) };
  return load;
}

test('ten viewers asking at once, and again within the second, cause one read', async () => {
  const cache = new ReadCache(60_000);
  const load = counted({ page: 1 });
  const answers = await Promise.all(Array.from({ length: 10 }, () => cache.get('jobs a', load.fn)));
  assert.equal(load.calls, 1);
  assert.ok(answers.every((a) => a.value.page === 1));
  await cache.get('jobs a', load.fn);
  assert.equal(load.calls, 1);
  await cache.get('jobs b', load.fn);
  assert.equal(load.calls, 2, 'another key is another read');
});

test('a cached answer tells its age; past its time an answer is read again', async () => {
  const cache = new ReadCache(60_000);
  const load = counted('x');
  const before = performance.now();
  const first = await cache.get('k', load.fn);
  assert.ok(first.ageMs <= performance.now() - before);
  const at = performance.now();
  await waitFor('the answer to age', async () => performance.now() - at > 20, { intervalMs: 5 });
  const cached = await cache.get('k', load.fn);
  assert.equal(load.calls, 1);
  assert.ok(cached.ageMs >= 20, `age ${cached.ageMs}`);

  const short = new ReadCache(50);
  const again = counted('y');
  await short.get('k', again.fn);
  await short.get('long', again.fn, { ttlMs: 60_000 }); // its own time: it stays
  const t = performance.now();
  await waitFor('the answer to expire', async () => performance.now() - t > 60, { intervalMs: 5 });
  await short.get('k', again.fn);
  assert.equal(again.calls, 3);
  await waitFor('it to expire again', async () => performance.now() - t > 130, { intervalMs: 5 });
  await short.get('third', again.fn);
  assert.equal(short.size, 2, "the expired 'k' was dropped as 'third' came; 'long' stays");
});

test('a read slower than the time of its answers is joined, not started again beside it', async () => {
  const cache = new ReadCache(10);
  let release!: (v: string) => void;
  let calls = 0;
  const slow = () => (calls++, new Promise<string>((r) => (release = r)));
  const first = cache.get('k', slow);
  const t = performance.now();
  await waitFor('longer than the time of an answer', async () => performance.now() - t > 30, { intervalMs: 5 });
  const second = cache.get('k', slow);
  release('v');
  assert.deepEqual([(await first).value, (await second).value], ['v', 'v']);
  assert.equal(calls, 1);
});

test('a failed read is not kept; clear() forgets everything', async () => {
  const cache = new ReadCache(60_000);
  let fail = true;
  const load = async () => {
    if (fail) throw new Error('statement timeout');
    return 'ok';
  };
  await assert.rejects(cache.get('k', load), /statement timeout/);
  fail = false;
  assert.equal((await cache.get('k', load)).value, 'ok', 'the next viewer reads again');
  const other = counted('y');
  await cache.get('z', other.fn);
  cache.clear();
  await cache.get('z', other.fn);
  assert.equal(other.calls, 2);
});

test('fresh: a read of its own, even beside a running one, whose answer then serves the others', async () => {
  const cache = new ReadCache(60_000);
  let n = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const slowFirst = () => (n++ === 0 ? gate.then(() => 'before') : Promise.resolve('after'));
  const running = cache.get('k', slowFirst);
  const fresh = await cache.get('k', slowFirst, { fresh: true });
  assert.equal(fresh.value, 'after', 'not joined to the read that began earlier');
  release();
  assert.equal((await running).value, 'before');
  assert.equal((await cache.get('k', slowFirst)).value, 'after', 'the fresh answer is the one kept');
  assert.equal(n, 2);
});

/** The overview's database warnings: a transaction left open long enough to matter (the session named, its text escaped), and transaction ids near wraparound. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { LONG_TRANSACTION_MS, longTransaction, xidAgeHigh } from '../../lib/ui/db-health';
import { DatabaseHealth } from './database-health';

const tx = (ageMs: number, extra: Partial<{ state: string | null; application: string | null; user: string | null }> = {}) => ({
  ageMs,
  pid: 4242,
  state: 'idle in transaction',
  application: 'psql',
  user: 'ops',
  ...extra,
});
const db = (oldestTransaction: ReturnType<typeof tx> | null, xidAge = 4_500, deadRows: number | null = 12_345) => ({ oldestTransaction, deadRows, xidAge });

test('a transaction is called out from ten minutes when the snapshot was read, the age told counting the snapshot\'s', () => {
  assert.equal(longTransaction(db(null), 0), null);
  assert.equal(longTransaction(db(tx(5_000)), 0), null, 'a transaction of seconds is the normal life of a queue');
  assert.equal(longTransaction(db(tx(LONG_TRANSACTION_MS - 1)), 0), null);
  assert.equal(longTransaction(db(tx(LONG_TRANSACTION_MS - 10_000)), 20_000), null, 'short of ten minutes when read, 20 s ago: it may have ended since (the next snapshot tells)');
  assert.equal(longTransaction(db(tx(LONG_TRANSACTION_MS + 10_000)), 20_000)?.ageMs, LONG_TRANSACTION_MS + 30_000, 'past it when read: the age told counts the snapshot\'s');
  assert.equal(longTransaction(db(tx(LONG_TRANSACTION_MS + 1)), -60_000)?.ageMs, LONG_TRANSACTION_MS + 1, 'a browser clock behind does not make it younger');
});

test('transaction ids a billion old are called out', () => {
  assert.equal(xidAgeHigh(db(null, 200_000_000)), false);
  assert.equal(xidAgeHigh(db(null, 1_000_000_000)), true);
  assert.equal(xidAgeHigh({ oldestTransaction: null, deadRows: null, xidAge: null }), false);
});

test('the banner names the session (its text escaped), the dead rows and how to end it; nothing when all is well', () => {
  const html = (d: ReturnType<typeof db>) => renderToStaticMarkup(createElement(DatabaseHealth, { database: d, snapshotAgeMs: 0 }));
  assert.equal(html(db(tx(60_000))), '', 'a minute: nothing');
  const out = html(db(tx(62 * 60_000, { application: '<img src=x onerror=alert(1)>' })));
  assert.match(out, /data-testid="long-transaction"/);
  assert.match(out, /open for 1 h 2 min in this database \(pid 4242, <bdi>idle in transaction<\/bdi>, application <bdi>&lt;img src=x onerror=alert\(1\)&gt;<\/bdi>, user <bdi>ops<\/bdi>\)/);
  assert.match(out, /12,345 dead rows in jobs now/);
  assert.match(out, /SELECT pg_terminate_backend\(4242\)/);
  assert.doesNotMatch(out, /<img/);
  assert.doesNotMatch(html(db(tx(62 * 60_000), 4_500, null)), /dead rows/, 'no count when the collector has none');
  const wrap = html(db(null, 1_500_000_000));
  assert.match(wrap, /data-testid="xid-age"/);
  assert.match(wrap, /oldest unfrozen transaction id is 1,500,000,000 transactions old/);
});

/** An attempt's timing says how long it ran — for a lost lease, until its worker was last heard from. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attemptTiming } from './attempt-list';

const at = (s: number) => new Date(Date.UTC(2026, 11, 1, 10, 0, s)).toISOString();

test('a lease lost at once (a poison job killed its worker) is not "took 30 s"', () => {
  const a = { outcome: 'lease_lost' as const, startedAt: at(0), heartbeatAt: at(0), finishedAt: at(31) };
  assert.equal(attemptTiming(a, Date.parse(at(31))), 'never renewed its lease; recovered 31 s later (its lease ended)');
  const renewed = { ...a, heartbeatAt: at(20), finishedAt: at(51) };
  assert.equal(attemptTiming(renewed, Date.parse(at(51))), 'last heard from 20 s after its start; recovered 31 s later (its lease ended)');
});

test('other attempts: how long they took, or run so far', () => {
  assert.match(attemptTiming({ outcome: 'completed' as const, startedAt: at(0), heartbeatAt: null, finishedAt: at(2) }, Date.parse(at(2))), /^took 2\.0 s$|^took 2 s$/);
  assert.match(attemptTiming({ outcome: null, startedAt: at(0), heartbeatAt: at(10), finishedAt: null }, Date.parse(at(12))), /^running for 12 s · last heartbeat /);
});

test("each attempt links to its logs when a template is set, its own worker and times filled in; none without", async () => {
  const { createElement } = await import('react');
  const { renderToStaticMarkup } = await import('react-dom/server');
  const { AttemptList } = await import('./attempt-list');
  const attempts = [
    { attempt: 1, workerId: 'h:1:aaa', outcome: 'retried', startedAt: at(0), heartbeatAt: null, finishedAt: at(2), error: 'boom', errorStack: null },
    { attempt: 2, workerId: 'h:2:bbb', outcome: null, startedAt: at(5), heartbeatAt: null, finishedAt: null, error: null, errorStack: null },
  ] as Parameters<typeof AttemptList>[0]['attempts'];
  const job = { id: '7', queue: 'q', type: 't' };
  const html = renderToStaticMarkup(createElement(AttemptList, { attempts, nowMs: Date.parse(at(9)), logs: { template: 'https://logs.example.com/?job={id}&w={worker}&to={finishedMs}', job } }));
  assert.match(html, /href="https:\/\/logs.example.com\/\?job=7&amp;w=h%3A1%3Aaaa&amp;to=\d+" target="_blank" rel="noopener noreferrer"/);
  assert.ok(html.includes(`href="https://logs.example.com/?job=7&amp;w=h%3A2%3Abbb&amp;to=${Date.parse(at(9))}"`), 'the running attempt: up to the page\'s time');
  const none = renderToStaticMarkup(createElement(AttemptList, { attempts, nowMs: Date.parse(at(9)), logs: { template: null, job } }));
  assert.ok(!none.includes('attempt-logs'));
});

test("an attempt's very long error shows its start and a button for the rest; a short one is whole", async () => {
  const { createElement } = await import('react');
  const { renderToStaticMarkup } = await import('react-dom/server');
  const { AttemptList } = await import('./attempt-list');
  const long = `<html>${'x'.repeat(10_000)}</html> THE-END`;
  const attempts = [
    { attempt: 1, workerId: 'h:1:aaa', outcome: 'retried', startedAt: at(0), heartbeatAt: null, finishedAt: at(2), error: long, errorStack: null },
    { attempt: 2, workerId: 'h:2:bbb', outcome: 'retried', startedAt: at(3), heartbeatAt: null, finishedAt: at(4), error: 'short and whole', errorStack: null },
  ] as Parameters<typeof AttemptList>[0]['attempts'];
  const html = renderToStaticMarkup(createElement(AttemptList, { attempts, nowMs: Date.parse(at(9)) }));
  assert.doesNotMatch(html, /THE-END/);
  assert.match(html, /&lt;html&gt;x{594}<\/bdi>… <button[^>]*>show all \(9,421 more characters\)<\/button>/);
  assert.match(html, /short and whole<\/bdi><\/p>/);
});

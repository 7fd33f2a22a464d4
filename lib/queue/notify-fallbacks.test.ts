/**
 * The doorbell's NOTIFY fallbacks are counted and told at warn, once per interval per
 * queue, with how many were folded into the line (lib/queue/signal.ts NotifyFallbacks).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Logger } from '../log';
import { NotifyFallbacks } from './signal';

function recorder() {
  const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  const logger: Logger = {
    debug: (msg, fields) => lines.push({ level: 'debug', msg, fields }),
    info: (msg, fields) => lines.push({ level: 'info', msg, fields }),
    warn: (msg, fields) => lines.push({ level: 'warn', msg, fields }),
    error: (msg, fields) => lines.push({ level: 'error', msg, fields }),
    child: () => logger,
  };
  return { lines, logger };
}

test('a fallback is counted per job and warned once per interval per queue; the next line says how many were folded', () => {
  const { lines, logger } = recorder();
  let now = 1_000;
  const f = new NotifyFallbacks(logger, 60_000, () => now);
  f.note(new Map([['mail', ['1', '2']]]), 'the push failed', new Error('READONLY'));
  assert.equal(f.total, 2);
  assert.equal(lines.length, 1);
  assert.equal(lines[0]!.level, 'warn');
  assert.deepEqual(lines[0]!.fields, { queue: 'mail', jobs: 2, why: 'the push failed', err: 'READONLY', nextReportInS: 60 });

  // Within the minute: counted, not told; another queue is told on its own.
  for (let k = 0; k < 5; k++) {
    now += 1_000;
    f.note(new Map([['mail', ['3']]]), 'the push failed');
  }
  f.note(new Map([['reports', ['9']]]), 'Redis is not connected (reconnecting)');
  assert.equal(f.total, 8);
  assert.deepEqual(lines.map((l) => l.fields?.queue), ['mail', 'reports']);

  now += 60_000;
  f.note(new Map([['mail', ['4']]]), 'the push failed');
  assert.equal(f.total, 9);
  assert.equal(lines.length, 3);
  assert.equal(lines[2]!.fields?.foldedRings, 5);
  assert.equal(lines[2]!.fields?.foldedJobs, 5);
});

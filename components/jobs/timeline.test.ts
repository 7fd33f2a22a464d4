/** A job's timeline tells its history as it happened, not as the job stands now. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AuditEntryDto } from '@/lib/api/audit';
import type { JobDetailDto } from '@/lib/api/types';
import { timelineEvents } from './timeline';

test('the enqueue line keeps the attempts allowed at enqueue after a requeue raised them', () => {
  const detail = {
    job: {
      id: '7', queue: 'mail', type: 'send', status: 'queued', attemptCount: 3, maxAttempts: 6, attemptBudget: 3,
      createdAt: '2026-12-01T10:00:00.000Z', runAt: '2026-12-01T10:00:00.000Z', finishedAt: null, cancelRequestedAt: null,
    },
    attempts: [],
    dbNow: '2026-12-01T10:05:00.000Z',
  } as unknown as JobDetailDto;
  const [enqueued] = timelineEvents(detail);
  assert.equal(enqueued!.what, 'enqueued');
  assert.equal(enqueued!.detail, 'queue mail, up to 3 attempts');
});

test('a lost lease that ended the job says where the job went; an earlier one does not', () => {
  const attempt = (n: number, start: string, end: string) => ({
    attempt: n, workerId: `w${n}`, outcome: 'lease_lost', startedAt: start, heartbeatAt: start, finishedAt: end, error: null, errorStack: null,
  });
  const detail = {
    job: {
      id: '9', queue: 'q', type: 'demo.sleep', status: 'failed', attemptCount: 2, maxAttempts: 2, attemptBudget: 2,
      createdAt: '2026-12-01T10:00:00.000Z', runAt: '2026-12-01T10:00:00.000Z', finishedAt: '2026-12-01T10:01:10.000Z', cancelRequestedAt: null,
    },
    attempts: [attempt(1, '2026-12-01T10:00:00.000Z', '2026-12-01T10:00:31.000Z'), attempt(2, '2026-12-01T10:00:32.000Z', '2026-12-01T10:01:10.000Z')],
    dbNow: '2026-12-01T10:05:00.000Z',
  } as unknown as JobDetailDto;
  const lines = timelineEvents(detail).map((e) => e.what);
  assert.ok(lines.includes('attempt 1 lease lost (the worker stopped renewing)'), lines.join('\n'));
  assert.ok(lines.includes('attempt 2 lease lost (the worker stopped renewing) → dead letter (no attempts left)'), lines.join('\n'));
  assert.ok(!lines.some((l) => l.startsWith('finished:')), 'the end is said once');
});

test('a failure that ended the job says why: attempts used up, or a permanent error with attempts left', () => {
  const failedAt = (n: number, end: string) => ({
    attempt: n, workerId: 'w', outcome: 'failed', startedAt: '2026-12-01T10:00:00.000Z', heartbeatAt: null, finishedAt: end, error: 'boom', errorStack: null,
  });
  const job = (attemptCount: number, maxAttempts: number) => ({
    id: '11', queue: 'q', type: 't', status: 'failed', attemptCount, maxAttempts, attemptBudget: maxAttempts,
    createdAt: '2026-12-01T10:00:00.000Z', runAt: '2026-12-01T10:00:00.000Z', finishedAt: '2026-12-01T10:00:01.000Z', cancelRequestedAt: null,
  });
  const lines = (d: unknown) => timelineEvents(d as JobDetailDto).map((e) => e.what);
  const permanent = lines({ job: job(1, 3), attempts: [failedAt(1, '2026-12-01T10:00:01.000Z')], dbNow: '2026-12-01T10:05:00.000Z' });
  assert.ok(permanent.includes('attempt 1 failed → dead letter (a permanent error: not retried, 2 attempts left)'), permanent.join('\n'));
  const usedUp = lines({ job: job(1, 1), attempts: [failedAt(1, '2026-12-01T10:00:01.000Z')], dbNow: '2026-12-01T10:05:00.000Z' });
  assert.ok(usedUp.includes('attempt 1 failed → dead letter (no attempts left)'), usedUp.join('\n'));
  // Requeued since (its attempts raised): the earlier failure's cause is not guessed.
  const requeued = lines({ job: { ...job(2, 4), status: 'queued', finishedAt: null }, attempts: [failedAt(2, '2026-12-01T10:00:01.000Z')], dbNow: '2026-12-01T10:05:00.000Z' });
  assert.ok(requeued.includes('attempt 2 failed → dead letter'), requeued.join('\n'));
});

test('a due time still to come is told apart from what happened', () => {
  const detail = (runAt: string) =>
    ({
      job: {
        id: '8', queue: 'q', type: 't', status: 'queued', attemptCount: 0, maxAttempts: 3, attemptBudget: 3,
        createdAt: '2026-12-01T10:00:00.000Z', runAt, finishedAt: null, cancelRequestedAt: null,
      },
      attempts: [],
      dbNow: '2026-12-01T10:05:00.000Z',
    }) as unknown as JobDetailDto;
  const later = timelineEvents(detail('2026-12-01T11:00:00.000Z')).at(-1)!;
  assert.deepEqual([later.what, later.future], ['will be due (scheduled, not yet)', true]);
  const past = timelineEvents(detail('2026-12-01T10:01:00.000Z')).at(-1)!;
  assert.deepEqual([past.what, past.future], ['due', false]);
});

test('a copy is told on both jobs: the original names the copy, the copy its original; a bulk action stays bulk', () => {
  const detail = (id: string) =>
    ({
      job: { id, queue: 'q', type: 'demo.sleep', status: 'failed', attemptCount: 1, maxAttempts: 1, attemptBudget: 1, createdAt: '2026-12-01T10:00:00.000Z', runAt: '2026-12-01T10:00:00.000Z', finishedAt: null, cancelRequestedAt: null },
      attempts: [],
      dbNow: '2026-12-01T10:05:00.000Z',
    }) as unknown as JobDetailDto;
  const entry = (action: string, jobIds: string[], state: AuditEntryDto['state'] = 'done'): AuditEntryDto => ({
    id: '1', at: '2026-12-01T10:02:00.000Z', actor: 'ana', actorKind: 'user', action, target: { ids: [jobIds[0]] }, jobIds, changed: state === 'done' ? 1 : 0, skipped: 0, reason: 'bad ms', details: {}, state,
  });
  const line = (id: string, e: AuditEntryDto) => timelineEvents(detail(id), [e]).find((x) => x.at === e.at)!;
  assert.equal(line('9', entry('copy', ['9', '12'])).what, 'copied by ana → job #12');
  assert.equal(line('9', entry('copy', ['9', '12'])).detail, 'reason: bad ms');
  assert.equal(line('12', entry('copy', ['9', '12'])).what, 'enqueued by ana as a copy of job #9');
  assert.equal(line('9', entry('copy', ['9'], 'failed')).what, 'copied by ana — failed');
  assert.equal(line('9', entry('requeue', ['9', '10'])).what, 'requeue (bulk) by ana');
});

test('a reschedule says what moved: the due time, the priority or both', () => {
  const detail = {
    job: { id: '9', queue: 'q', type: 'demo.sleep', status: 'queued', attemptCount: 0, maxAttempts: 3, attemptBudget: 3, createdAt: '2026-12-01T10:00:00.000Z', runAt: '2026-12-01T10:00:00.000Z', finishedAt: null, cancelRequestedAt: null },
    attempts: [],
    dbNow: '2026-12-01T10:05:00.000Z',
  } as unknown as JobDetailDto;
  const entry = (details: Record<string, unknown>, changed = 1): AuditEntryDto => ({
    id: '1', at: '2026-12-01T10:02:00.000Z', actor: 'ana', actorKind: 'user', action: 'reschedule', target: { ids: ['9'] }, jobIds: ['9'], changed, skipped: 1 - changed, reason: null, details, state: 'done',
  });
  const line = (e: AuditEntryDto) => timelineEvents(detail, [e]).find((x) => x.at === e.at)!.what;
  assert.equal(line(entry({ runAt: null, priority: 0 })), 'rescheduled by ana (priority 0)');
  assert.match(line(entry({ runAt: '2026-12-02T08:00:00.000Z', priority: null })), /^rescheduled by ana \(due .+\)$/);
  assert.match(line(entry({ runAt: '2026-12-02T08:00:00.000Z', priority: 7 }, 0)), /^rescheduled by ana \(due .+, priority 7\) — skipped$/);
});

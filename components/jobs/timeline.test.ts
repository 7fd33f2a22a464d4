/** A job's timeline tells its history as it happened, not as the job stands now. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
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

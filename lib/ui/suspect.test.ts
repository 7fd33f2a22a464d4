/** The console's suspect mark: leases lost in a row, unless the job has since finished well. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SUSPECT_STREAK } from '../queue/job';
import { marksSuspect } from './suspect';

test('a job that lost its lease twice in a row is marked while unfinished, and when it failed', () => {
  for (const status of ['queued', 'retrying', 'running', 'failed']) assert.equal(marksSuspect(status, SUSPECT_STREAK, SUSPECT_STREAK), true, status);
  assert.equal(marksSuspect('running', SUSPECT_STREAK - 1, SUSPECT_STREAK), false, 'one loss is what a crash does to every job in hand');
});

test('a completed or cancelled job is no longer a suspect', () => {
  for (const status of ['completed', 'cancelled']) assert.equal(marksSuspect(status, 5, SUSPECT_STREAK), false, status);
});

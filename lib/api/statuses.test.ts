import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jobStatus } from '../db/schema';
import { JOB_STATUSES } from './statuses';

test('the browser list of statuses is the database enum', () => {
  assert.deepEqual([...JOB_STATUSES], [...jobStatus.enumValues]);
});

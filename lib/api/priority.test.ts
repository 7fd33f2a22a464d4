import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_PRIORITY as QUEUE_DEFAULT, PRIORITY_LEVELS } from '../queue/job';
import { DEFAULT_PRIORITY, LAST_PRIORITY, priorityMeaning } from './priority';

test("the browser's priorities are the queue library's", () => {
  assert.equal(DEFAULT_PRIORITY, QUEUE_DEFAULT);
  assert.equal(LAST_PRIORITY, PRIORITY_LEVELS - 1);
});

test('a priority in words', () => {
  assert.equal(priorityMeaning(0), 'the default: runs first');
  assert.equal(priorityMeaning(1), 'runs after jobs of priority 0 that are due');
  assert.equal(priorityMeaning(9), 'runs after jobs of priority 0–8 that are due');
});

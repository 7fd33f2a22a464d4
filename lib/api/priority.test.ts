import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_PRIORITY as QUEUE_DEFAULT, PRIORITY_LEVELS } from '../queue/job';
import { DEFAULT_PRIORITY, LAST_PRIORITY, placeInLine, priorityMeaning } from './priority';

test("the browser's priorities are the queue library's", () => {
  assert.equal(DEFAULT_PRIORITY, QUEUE_DEFAULT);
  assert.equal(LAST_PRIORITY, PRIORITY_LEVELS - 1);
});

test('a priority in words', () => {
  assert.equal(priorityMeaning(0), 'the default: runs first');
  assert.equal(priorityMeaning(1), 'runs after jobs of priority 0 that are due');
  assert.equal(priorityMeaning(9), 'runs after jobs of priority 0–8 that are due');
});

test("a due waiting job's place in line, in words", () => {
  assert.equal(placeInLine({ higher: 0, sameLevel: 0, capped: false }, 3), 'first: no due job of its queue is ahead of it');
  assert.equal(placeInLine({ higher: 0, sameLevel: 1, capped: false }, 0), '1 due job of its queue ahead of it: 1 of priority 0 that came due first');
  assert.equal(placeInLine({ higher: 1200, sameLevel: 3, capped: false }, 5), '1,203 due jobs of its queue ahead of it: 1,200 of priority 0–4, then 3 of priority 5 that came due first');
  assert.equal(placeInLine({ higher: 9000, sameLevel: 1000, capped: true }, 1), 'at least 10,000 due jobs of its queue ahead of it');
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSearch, searchText } from './job-filters';

test('the search box: a number is a job id, other text is error text', () => {
  assert.deepEqual(parseSearch('4211'), { id: '4211' });
  assert.deepEqual(parseSearch(' #4211 '), { id: '4211' });
  assert.deepEqual(parseSearch('timeout'), { error: 'timeout' });
  assert.deepEqual(parseSearch(''), {});
});

test('a number in double quotes is error text, so "503" can be searched for', () => {
  assert.deepEqual(parseSearch('"503"'), { error: '503' });
  assert.deepEqual(parseSearch('"connection refused"'), { error: 'connection refused' });
});

test('the box shows what the URL holds, quoted where it would read as an id', () => {
  assert.equal(searchText({ error: '503' }), '"503"');
  assert.equal(searchText({ error: 'timeout' }), 'timeout');
  assert.equal(searchText({ id: '42' }), '42');
  for (const s of ['4211', '"503"', 'timeout']) assert.equal(searchText(parseSearch(s)), s, `${s} round-trips`);
});

/** The query a saved view keeps and compares: the page's applied filters, in the filter bar's order. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { viewHref, viewQueryOf } from './pages';

test("a view's query is the page's applied filters in the filter bar's order, whatever order the link had", () => {
  const link = new URLSearchParams('finishedSince=24h&focus=search&type=payment.charge&status=failed');
  assert.equal(viewQueryOf('jobs', link), 'status=failed&type=payment.charge&finishedSince=24h');
  assert.equal(viewQueryOf('jobs', new URLSearchParams('')), '');
});

test('what the page drops is not in it: a mistyped status, and on the dead letter any status (it lists failed jobs only)', () => {
  assert.equal(viewQueryOf('jobs', new URLSearchParams('status=faild&queue=mail')), 'queue=mail');
  assert.equal(viewQueryOf('dead-letter', new URLSearchParams('status=failed&queue=mail')), 'queue=mail');
  // The legacy free search reads as the filter it stands for.
  assert.equal(viewQueryOf('jobs', new URLSearchParams('q=4211')), 'id=4211');
});

test('a view opens its page with its query', () => {
  assert.equal(viewHref({ page: 'jobs', query: 'status=failed' }), '/jobs?status=failed');
  assert.equal(viewHref({ page: 'dead-letter', query: '' }), '/dead-letter');
});

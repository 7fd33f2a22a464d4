/** The payload tree, rendered to markup: a long string value is cut until asked for whole. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { PayloadView } from './payload-view';

test('a string value of 20,000 characters shows its first thousand and a button for the rest', () => {
  const html = renderToStaticMarkup(createElement(PayloadView, { text: JSON.stringify({ body: 'x'.repeat(20_000), to: 'bob' }) }));
  assert.match(html, /show all 20,002 characters/);
  assert.ok(!html.includes('x'.repeat(1_001)), 'not the whole string');
  assert.ok(html.includes('x'.repeat(999)));
  assert.match(html, /bob/, 'short values whole');
});

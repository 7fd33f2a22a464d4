import assert from 'node:assert/strict';
import { test } from 'node:test';
import { visible, visibleParts } from './visible';

// The CLI's own checks of visible() (every C0, C1 and bidirectional control) are in worker/cli/common.test.ts.

test('multi-line text keeps tab, line feed and carriage return, and shows every other hidden character', () => {
  const stack = 'Error: boom\r\n\tat x (\u202Efile.js:1)\u2028\u001b[2J';
  assert.equal(visible(stack, { multiline: true }), 'Error: boom\r\n\tat x (\\u202efile.js:1)\\u2028\\x1b[2J');
  assert.equal(visible(stack), 'Error: boom\\x0d\\x0a\\x09at x (\\u202efile.js:1)\\u2028\\x1b[2J');
});

test('visibleParts cuts the text into plain runs and single hidden characters, and joins back to the text', () => {
  assert.deepEqual(visibleParts('x\u202Eliam'), ['x', { hidden: '\u202E' }, 'liam']);
  assert.deepEqual(visibleParts('\u2066\u2069'), [{ hidden: '\u2066' }, { hidden: '\u2069' }]);
  assert.deepEqual(visibleParts('plain ״עברית״ text'), ['plain ״עברית״ text']);
  assert.deepEqual(visibleParts(''), ['']);
  assert.deepEqual(visibleParts('a\nb\u0085', { multiline: true }), ['a\nb', { hidden: '\u0085' }]);
  const s = 'q\u202Dx\n\u0000y\u061C';
  const joined = visibleParts(s)
    .map((p) => (typeof p === 'string' ? p : p.hidden))
    .join('');
  assert.equal(joined, s);
});

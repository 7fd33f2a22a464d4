import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clampText } from './clamp';

test('a text that fits is shown whole', () => {
  assert.equal(clampText('short'), null);
  assert.equal(clampText('x'.repeat(600)), null);
  assert.equal(clampText('a\nb\nc', { lines: 3 }), null);
  assert.equal(clampText('a\nb\nc\n', { lines: 3 }), null, 'a final newline is not "1 more character"');
  assert.equal(clampText(`${'x'.repeat(600)}  \n`), null);
});

test('a long text is cut at the character limit, and says how much is left', () => {
  assert.deepEqual(clampText('x'.repeat(601)), { head: 'x'.repeat(600), rest: 1 });
  assert.deepEqual(clampText('abcdef', { chars: 4 }), { head: 'abcd', rest: 2 });
});

test('a text of many short lines is cut before the line past the limit', () => {
  const text = Array.from({ length: 20 }, (_, k) => `line ${k}`).join('\n');
  const cut = clampText(text, { lines: 3 });
  assert.equal(cut?.head, 'line 0\nline 1\nline 2');
  assert.equal(cut!.head.length + cut!.rest, text.length);
});

test('the cut falls between characters, never inside a surrogate pair', () => {
  const cut = clampText('😀'.repeat(5), { chars: 3 });
  assert.deepEqual(cut, { head: '😀😀😀', rest: 2 });
});

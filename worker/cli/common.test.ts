/** The CLI's output helpers that need no database. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { EXIT, reportError, visible } from './common';

test('visible escapes C0, DEL and C1 control characters and leaves other text as it is', () => {
  assert.equal(visible('evil\u001b]0;pwned\u0007\u001b[2J'), 'evil\\x1b]0;pwned\\x07\\x1b[2J');
  assert.equal(visible('a\u0000b\tc\nd\u007fe\u0080f\u009bg\u009fh'), 'a\\x00b\\x09c\\x0ad\\x7fe\\u0080f\\u009bg\\u009fh');
  const plain = 'mail → smtp timeout: 550 «no» \u00a0 ok 😀 \\x1b';
  assert.equal(visible(plain), plain);
  for (let c = 0; c <= 0xff; c++) {
    const out = visible(String.fromCharCode(c));
    assert.equal(/[\u0000-\u001f\u007f-\u009f]/.test(out), false, `U+${c.toString(16)} → ${JSON.stringify(out)}`);
  }
});

test('a validation error that reaches reportError is bad input (exit 2) naming the field, not a bug (70)', (t) => {
  const said = t.mock.method(console, 'error', () => {});
  const r = z.object({ queue: z.string().min(1) }).safeParse({ queue: '' });
  assert.equal(reportError(r.error), EXIT.usage);
  assert.match(said.mock.calls[0]!.arguments[0], /^leasehold: queue: /);
});

/** The CLI's output helpers that need no database. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { EXIT, namedByFlag, reportError, visible } from './common';

test('visible escapes C0, DEL and C1 control characters, bidirectional controls and line separators, and leaves other text as it is', () => {
  assert.equal(visible('evil\u001b]0;pwned\u0007\u001b[2J'), 'evil\\x1b]0;pwned\\x07\\x1b[2J');
  assert.equal(visible('a\u0000b\tc\nd\u007fe\u0080f\u009bg\u009fh'), 'a\\x00b\\x09c\\x0ad\\x7fe\\u0080f\\u009bg\\u009fh');
  const plain = 'mail → smtp timeout: 550 «no» \u00a0 ok 😀 \\x1b';
  assert.equal(visible(plain), plain);
  // Bidirectional controls would show a name reordered; the line separators start a line.
  assert.equal(visible('x\u202Eliam'), 'x\\u202eliam');
  for (const c of [0x061c, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]) {
    assert.equal(visible(String.fromCharCode(c)), `\\u${c.toString(16).padStart(4, '0')}`);
  }
  assert.equal(visible('\u200b\u00ad\u05d0\u0627'), '\u200b\u00ad\u05d0\u0627', 'other format characters and right-to-left letters stay');
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

test("namedByFlag names the flag typed for a field's error, and leaves other messages (and inherited names) as they are", () => {
  const flags = { runAt: '--run-at' };
  assert.equal(namedByFlag('runAt: must be an ISO 8601 date-time', flags), '--run-at: must be an ISO 8601 date-time');
  assert.equal(namedByFlag('payload: not an object', flags), 'payload: not an object');
  assert.equal(namedByFlag('constructor: odd', flags), 'constructor: odd');
  assert.equal(namedByFlag('runAtX: other', flags), 'runAtX: other');
});

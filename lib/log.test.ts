import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from './log';

test('a log line never throws: a circular object or a BigInt is written inspected (the worker logs any rejection reason)', (t) => {
  const lines: string[] = [];
  t.mock.method(process.stderr, 'write', (s: string) => lines.push(s) > 0);
  const circular: Record<string, unknown> = { name: 'loop' };
  circular.self = circular;
  const log = createLogger({ worker: 'w-1' });
  log.error('a promise rejection nobody handled', { err: circular });
  log.error('a promise rejection nobody handled', { err: 10n, plain: { a: 1 }, nothing: undefined, fn: () => 1 });
  assert.equal(lines.length, 2);
  assert.match(lines[0]!, /ERROR a promise rejection nobody handled worker=w-1 err="<ref \*1> \{ name: 'loop', self: \[Circular \*1\] \}"\n$/);
  assert.match(lines[1]!, / err="10n" plain=\{"a":1\} fn=\(\)\s*=>\s*1\n$/);
});

test('text from producers and handlers cannot act on the terminal: controls, C1 and bidi characters are escaped', (t) => {
  const lines: string[] = [];
  t.mock.method(process.stderr, 'write', (s: string) => lines.push(s) > 0);
  const log = createLogger();
  log.warn('a ring went by PostgreSQL NOTIFY', { queue: 'rq\u001b[2J', key: 'r\u009b2J', name: 'abc\u202efdp.exe', err: new Error('line one\nline two\u0007') });
  assert.equal(lines.length, 1);
  const line = lines[0]!;
  assert.equal(line.indexOf('\n'), line.length - 1, 'one line');
  assert.doesNotMatch(line.slice(0, -1), /[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
  assert.match(line, / queue="rq\\u001b\[2J" key="r\\u009b2J" name="abc\\u202efdp\.exe" err="line one\\nline two\\u0007"\n$/);
});

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

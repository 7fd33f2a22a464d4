/** The lines of an `enqueue --file` input, as readline would split them, but decoded strictly. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { utf8Lines } from './enqueue';

const lines = async (...chunks: (string | Buffer)[]) => {
  const out: (string | null)[] = [];
  for await (const l of utf8Lines((async function* () { for (const c of chunks) yield typeof c === 'string' ? Buffer.from(c) : c; })())) out.push(l);
  return out;
};

test('\\n, \\r\\n and a lone \\r end a line; a last line needs no end; chunks may split a line, a CRLF or a character', async () => {
  assert.deepEqual(await lines('a\nb\r\nc\rd'), ['a', 'b', 'c', 'd']);
  assert.deepEqual(await lines('ab', 'c\r', '\nd'), ['abc', 'd']);
  const euro = Buffer.from('€');
  assert.deepEqual(await lines(Buffer.concat([Buffer.from('x'), euro.subarray(0, 1)]), Buffer.concat([euro.subarray(1), Buffer.from('\n')])), ['x€']);
});

test('a line that is not UTF-8 comes as null; a byte-order mark is kept for the caller to judge', async () => {
  assert.deepEqual(await lines(Buffer.from([0x6b, 0xe9, 0x0a]), 'ok\n'), [null, 'ok']);
  assert.deepEqual(await lines('\ufeffa\n\ufeffb\n'), ['\ufeffa', '\ufeffb']);
});

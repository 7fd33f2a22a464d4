import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseJson, printJson } from './json';

test('numbers keep every digit; strings and structure round-trip', () => {
  const text = '{"id": 9007199254740993, "s": "a\\"b\\u0000<script>", "n": [1.5e3, -0, true, null], "o": {}}';
  const n = parseJson(text);
  assert.equal(printJson(n).includes('9007199254740993'), true);
  assert.deepEqual(JSON.parse(printJson(n)), JSON.parse(text));
});

test('rejects what is not JSON', () => {
  assert.throws(() => parseJson('{"a":}'));
  assert.throws(() => parseJson('[1,]'));
  assert.throws(() => parseJson('1 2'));
});

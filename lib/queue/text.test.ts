import assert from 'node:assert/strict';
import { test } from 'node:test';
import { underflowingNumber } from './text';

test('a number too small for a double (read as 0) is found in JSON text; zeros, strings and ordinary numbers are not', () => {
  assert.equal(underflowingNumber('{"x":1e-400}'), '1e-400');
  assert.equal(underflowingNumber('[0, 1, -2.5e-330]'), '-2.5e-330');
  assert.equal(underflowingNumber(`{"x":0.${'0'.repeat(400)}1}`), `0.${'0'.repeat(35)}...`);
  assert.equal(underflowingNumber('{"x":0e-400,"y":0.0,"z":-0,"w":5e-324,"v":1e-300}'), null, 'zeros sent as zeros; the smallest doubles');
  assert.equal(underflowingNumber('{"s":"1e-400","t":"a\\"1e-400"}'), null, 'inside strings, escaped quotes included');
  assert.equal(underflowingNumber('{"concurrencyLimit":1e-400}'), '1e-400');
});

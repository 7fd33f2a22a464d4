/** How the console writes numbers. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compact } from './format';

test('compact: the unit follows the rounded number, so none reads 1000k or 10.00M', () => {
  const cases: [number, string][] = [
    [9_999, '9,999'],
    [10_000, '10.0k'],
    [99_949, '99.9k'],
    [99_960, '100k'],
    [999_499, '999k'],
    [999_600, '1.00M'],
    [1_234_567, '1.23M'],
    [9_994_999, '9.99M'],
    [9_999_999, '10.0M'],
    [123_456_789, '123.5M'],
  ];
  for (const [n, shown] of cases) assert.equal(compact(n), shown, String(n));
});

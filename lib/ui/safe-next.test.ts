import assert from 'node:assert/strict';
import { test } from 'node:test';
import { safeNext } from './safe-next';

const origin = 'https://console.example';

test('a path on this console is kept, as the browser will resolve it', () => {
  assert.equal(safeNext('/jobs?status=failed#top', origin), '/jobs?status=failed#top');
  assert.equal(safeNext('/', origin), '/');
  assert.equal(safeNext('/jobs/../workers', origin), '/workers');
  assert.equal(safeNext('/a//b', origin), '/a//b', 'a double slash after the first segment is still a path');
});

test('nothing that leaves the console, or is not a path, gets through', () => {
  const hostile = [
    '/\t/evil.example', // what ?next=%2F%09%2Fevil.example decodes to: the parser drops the tab
    '/\n/evil.example',
    '/\r\n/evil.example',
    '\t//evil.example',
    '//evil.example',
    '///evil.example',
    '/\\evil.example',
    '\\/evil.example',
    '/\\/evil.example',
    '/\t\\evil.example',
    '/.//evil.example', // resolves to the path "//evil.example": a host again when navigated to
    '/..//evil.example',
    '/../..//evil.example',
    '/a/..//evil.example',
    '/./\\evil.example',
    'https://evil.example/',
    'https:evil.example',
    'HTTPS://EVIL.EXAMPLE',
    'javascript:alert(1)',
    ' javascript:alert(1)',
    'jobs',
    '',
    null,
    undefined,
  ];
  for (const n of hostile) assert.equal(safeNext(n, origin), '/', JSON.stringify(n));
});

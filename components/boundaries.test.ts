/**
 * The console's house rule, made executable (../shared/research/aesthetics.md §8):
 * components are presentational — props in, callbacks out. They never fetch, never use
 * TanStack Query, and never import the queue library, the database or server code.
 * Nothing in the console renders HTML from data (no dangerouslySetInnerHTML anywhere).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const files = (dir: string): string[] =>
  fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return files(rel);
    return /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) ? [rel] : [];
  });

test('components/ neither fetch nor import server code, the queue library or the query client', () => {
  const offenders: string[] = [];
  for (const f of files('components')) {
    const src = fs.readFileSync(path.join(root, f), 'utf8');
    const imports = [...src.matchAll(/from\s+['"]([^'"]+)['"]/g)].map((m) => m[1]!);
    // Type-only imports are erased; everything else must stay client-safe and presentational.
    const valueImports = [...src.matchAll(/^import\s+(?!type\b)[^;]*?from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
    if (imports.some((i) => /(^|\/)lib\/(queue|db|server|http)\b|^pg$|^ioredis$/.test(i) && valueImports.includes(i))) offenders.push(`${f}: server import`);
    if (valueImports.some((i) => i.startsWith('@tanstack/react-query'))) offenders.push(`${f}: query client`);
    if (/\bfetch\(|\bapi\(|lib\/api\/(client|jobs|stats|actions|workers|dead-letter|console)['"]/.test(src)) offenders.push(`${f}: fetches`);
  }
  assert.deepEqual(offenders, []);
});

test('no file of the console renders raw HTML', () => {
  const hits = [...files('components'), ...files('app')].filter((f) => fs.readFileSync(path.join(root, f), 'utf8').includes('dangerouslySetInnerHTML'));
  assert.deepEqual(hits, []);
});

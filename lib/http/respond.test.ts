/** route(): what a caller is told when the database stops answering, by whether the request could have written. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { markReadOnly, route } from './respond';

const lost = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });

test('a lost answer: a write may have happened; a GET or a request marked read-only (a preview) changed nothing', async () => {
  const messageOf = async (res: Response) => ((await res.json()) as { error: { message: string } }).error.message;
  const write = route('public', async () => {
    throw lost();
  });
  const preview = route('public', async (req) => {
    markReadOnly(req);
    throw lost();
  });
  const post = () => new Request('http://localhost/api/x', { method: 'POST' });
  const w = await write(post());
  assert.equal(w.status, 503);
  assert.match(await messageOf(w), /may or may not have been done/);
  assert.match(await messageOf(await write(new Request('http://localhost/api/x'))), /only reads, so nothing was changed/);
  const p = await preview(post());
  assert.equal(p.status, 503);
  assert.match(await messageOf(p), /only reads, so nothing was changed/);
});

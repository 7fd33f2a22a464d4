/**
 * Saved views through the API with sign-in on: every role lists them; operators and admins
 * save them (audited, as user and token changes are); a view's creator or an admin deletes
 * it. A query holding anything its page would not read as written is refused (400), a name
 * the page has (whatever its case) or a page at its cap is 409 — each refusal writing nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cleanup } from '../../test/cleanup';
import { testDatabase } from '../../test/db';
import { REDIS_URL } from '../../test/env';
import { uniquePrefix } from '../../test/processes';
import { loadRoutes } from '../../test/api-routes';
import { auditCount, send } from '../../test/auth/harness';

const db = await testDatabase();
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = uniquePrefix('views');
process.env.LEASEHOLD_AUTH = 'on';
process.env.LEASEHOLD_REDACT_KEYS = 'secret';
cleanup(async () => (await import('@/lib/server/context')).closeServerContext());

const { userAdd, sessionCreate, tokenCreate } = await import('@/lib/auth/store');
const { MAX_VIEWS_PER_PAGE } = await import('@/lib/views/pages');
const routes = await loadRoutes();
const login = async (name: string, role: string) =>
  (await sessionCreate(db.pool, (await userAdd(db.pool, { name, role, password: `${name}-password-123` })).id)).id;
const vic = await login('vic', 'viewer');
const olga = await login('olga', 'operator');
const omar = await login('omar', 'operator');
const adam = await login('adam', 'admin');

const save = (cookie: string, body: unknown) => send(routes, 'POST', '/api/views', { cookie, body });
const list = async (cookie: string, query = '') => {
  const res = await send(routes, 'GET', '/api/views', { cookie, query });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()).views as { id: string; name: string; page: string; query: string; createdBy: string | null; deletable: boolean }[];
};
const remove = (cookie: string, id: string) => send(routes, 'DELETE', '/api/views/{id}', { cookie, params: { id } });
const rows = async () => (await db.pool.query('SELECT view_id, name, page, query FROM saved_views ORDER BY view_id')).rows;

/** Asserts `act` answers `status` with a message matching `message`, and changes no view and no audit entry. */
async function refused(act: () => Promise<Response>, status: number, message: RegExp) {
  const [before, audits] = [JSON.stringify(await rows()), await auditCount(db.pool)];
  const res = await act();
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  assert.match(body.error.message, message);
  assert.equal(JSON.stringify(await rows()), before, 'no view changed');
  assert.equal(await auditCount(db.pool), audits, 'a refused request leaves no audit entry');
}

describe('saving and listing', () => {
  test('an operator saves a view, stored in its page\'s filter order and audited; every role lists it', async () => {
    const res = await save(olga, { name: 'Failed payments, last 24h', page: 'jobs', query: '?finishedSince=24h&type=payment.charge&status=failed' });
    assert.equal(res.status, 201, await res.clone().text());
    const view = await res.json();
    assert.deepEqual(
      { name: view.name, page: view.page, query: view.query, createdBy: view.createdBy, deletable: view.deletable },
      { name: 'Failed payments, last 24h', page: 'jobs', query: 'status=failed&type=payment.charge&finishedSince=24h', createdBy: 'olga', deletable: true },
    );
    const { rows: audit } = await db.pool.query(`SELECT actor, action, target, changed FROM audit_log WHERE action = 'view.save'`);
    assert.deepEqual(audit, [{ actor: 'olga', action: 'view.save', target: { view: 'Failed payments, last 24h', page: 'jobs', id: view.id }, changed: 1 }]);

    for (const cookie of [vic, omar, adam]) {
      const seen = (await list(cookie, 'page=jobs')).find((v) => v.id === view.id);
      assert.ok(seen, 'listed for every role');
      assert.equal(seen.deletable, cookie === adam, 'only its creator or an admin may delete it');
    }
    assert.deepEqual(await list(vic, 'page=dead-letter'), [], "another page's views are not listed");
  });

  test('the dead letter takes its filters but status (it lists failed jobs only); the same name may be used on each page', async () => {
    const res = await save(omar, { name: 'failed payments, last 24h', page: 'dead-letter', query: 'type=payment.charge&fingerprint=0123456789ab' });
    assert.equal(res.status, 201, await res.clone().text());
    assert.equal((await res.json()).query, 'type=payment.charge&fingerprint=0123456789ab');
    await refused(() => save(omar, { name: 'x', page: 'dead-letter', query: 'status=failed' }), 400, /query: "status" is not a filter of \/dead-letter/);
  });

  test('an empty query is a view of the page unfiltered; a view saved through a token names it, and that token (not another, nor a viewer) deletes it', async () => {
    const { token } = await tokenCreate(db.pool, { name: 'ops-script', scope: 'operator', createdBy: 'test' });
    const { token: other } = await tokenCreate(db.pool, { name: 'other-script', scope: 'operator', createdBy: 'test' });
    const res = await send(routes, 'POST', '/api/views', { bearer: token, body: { name: 'Everything', page: 'jobs', query: '' } });
    assert.equal(res.status, 201, await res.clone().text());
    const view = await res.json();
    assert.deepEqual([view.query, view.createdBy, view.deletable], ['', 'ops-script (API token)', true]);
    const listed = async (bearer: string) => ((await (await send(routes, 'GET', '/api/views', { bearer, query: 'page=jobs' })).json()).views as { id: string; deletable: boolean }[]).find((v) => v.id === view.id);
    assert.equal((await listed(other))?.deletable, false);
    const refused = await send(routes, 'DELETE', '/api/views/{id}', { bearer: other, params: { id: view.id } });
    assert.equal(refused.status, 403);
    assert.equal((await remove(vic, view.id)).status, 403);
    assert.equal((await send(routes, 'DELETE', '/api/views/{id}', { bearer: token, params: { id: view.id } })).status, 200);
    assert.equal(await listed(token), undefined);
  });

  test('names are kept as written (user text, the console renders it escaped)', async () => {
    const name = `<img src=x onerror=alert(1)> "quoted" ' OR '1'='1`;
    const res = await save(olga, { name, page: 'jobs', query: 'queue=emails' });
    assert.equal(res.status, 201, await res.clone().text());
    assert.equal((await list(vic, 'page=jobs')).find((v) => v.query === 'queue=emails')?.name, name);
  });
});

describe('refused, writing nothing', () => {
  test('a query with anything the page would not read as written: 400 naming it', async () => {
    const cases: [string, RegExp][] = [
      ['statu=failed', /query: "statu" is not a filter of \/jobs \(it takes status, queue,/],
      ['focus=search', /"focus" is not a filter of \/jobs/],
      ['q=timeout', /"q" is not a filter of \/jobs/],
      ['cursor=10', /"cursor" is not a filter/],
      ['status=faild', /query: status: Invalid option/],
      ['status=failed&status=queued', /status is given more than once/],
      ['queue=', /queue is empty/],
      ['queue=%20mail', /queue must not start or end with whitespace/],
      ['id=abc', /query: id: must be a job id/],
      ['fingerprint=xyz', /query: fingerprint: must be an error fingerprint/],
      ['finishedSince=yesterday', /query: finishedSince: must be a span/],
      ['payload=a..b', /query: payload: must be/],
      [`worker=${'w'.repeat(250)}`, /query: worker: \/jobs would not read it as written/],
      ['queue=%E9', /query: not valid percent-encoded UTF-8/],
      ['queue=a%00b', /query: queue: must not contain NUL/],
    ];
    for (const [query, message] of cases) await refused(() => save(olga, { name: `bad ${query.slice(0, 20)}`, page: 'jobs', query }), 400, message);
  });

  test('a bad name, page or body: 400', async () => {
    await refused(() => save(olga, { name: 'x'.repeat(81), page: 'jobs', query: '' }), 400, /name: .*80/);
    await refused(() => save(olga, { name: '', page: 'jobs', query: '' }), 400, /name: /);
    await refused(() => save(olga, { name: ' padded', page: 'jobs', query: '' }), 400, /name: must not start or end with whitespace/);
    await refused(() => save(olga, { name: 'two\nlines', page: 'jobs', query: '' }), 400, /name: must be one line/);
    // What a menu would show as an escape, not as the name: C1 controls, line separators, bidi controls.
    for (const name of ['next\u0085line', 'two\u2028lines', 'invoice\u202Efdp.exe'])
      await refused(() => save(olga, { name, page: 'jobs', query: '' }), 400, /name: must be one line/);
    await refused(() => save(olga, { name: 'ok', page: 'workers', query: '' }), 400, /page: /);
    await refused(() => save(olga, { name: 'ok', page: 'jobs', query: 'x'.repeat(2001) }), 400, /query: /);
    await refused(() => save(olga, { name: 'ok', page: 'jobs', query: '', shared: true }), 400, /unknown field "shared"/);
    await refused(() => save(olga, { name: 'ok', page: 'jobs' }), 400, /query: /);
    await refused(() => send(routes, 'GET', '/api/views', { cookie: vic, query: 'page=workers' }), 400, /page: /);
  });

  test('a name the page has, whatever its case: 409 naming it', async () => {
    await refused(
      () => save(omar, { name: 'FAILED PAYMENTS, LAST 24H', page: 'jobs', query: 'status=failed' }),
      409,
      /a view named "Failed payments, last 24h" exists on \/jobs \(names are compared without case\)/,
    );
  });

  test('a name spelled with other Unicode code points for the same letters (é as e + U+0301) is the same name: 409', async () => {
    assert.equal((await save(olga, { name: 'Caf\u00e9 orders', page: 'dead-letter', query: '' })).status, 201);
    await refused(() => save(omar, { name: 'CAFE\u0301 ORDERS', page: 'dead-letter', query: 'queue=x' }), 409, /a view named "Café orders" exists on \/dead-letter/);
    await db.pool.query(`DELETE FROM saved_views WHERE name = 'Caf\u00e9 orders'`);
  });

  test(`a page keeps at most ${MAX_VIEWS_PER_PAGE} views: 409`, async () => {
    const { rows: n } = await db.pool.query(`SELECT count(*)::int AS n FROM saved_views WHERE page = 'dead-letter'`);
    await db.pool.query(`INSERT INTO saved_views (name, name_key, page, query) SELECT 'filler ' || k, 'filler ' || k, 'dead-letter', '' FROM generate_series(1, $1::int) k`, [MAX_VIEWS_PER_PAGE - n[0].n]);
    await refused(() => save(olga, { name: 'one too many', page: 'dead-letter', query: '' }), 409, /\/dead-letter has 200 saved views, the most it keeps: delete one first/);
    assert.equal((await save(olga, { name: 'one too many', page: 'jobs', query: '' })).status, 201, 'the other page is not full');
    await db.pool.query(`DELETE FROM saved_views WHERE name LIKE 'filler %'`);
  });

  test('a viewer saves and deletes nothing: 403', async () => {
    const [view] = await list(vic, 'page=jobs');
    await refused(() => save(vic, { name: 'mine', page: 'jobs', query: '' }), 403, /./);
    await refused(() => remove(vic, view!.id), 403, /./);
  });
});

describe('deleting', () => {
  test("someone else's view: 403 for an operator; its creator deletes it (audited), an admin deletes anyone's; gone: 404", async () => {
    const mine = await (await save(olga, { name: 'Olga\'s queue', page: 'jobs', query: 'queue=olga' })).json();
    const hers = await (await save(olga, { name: 'Olga\'s other', page: 'jobs', query: 'queue=olga2' })).json();
    await refused(() => remove(omar, mine.id), 403, /view "Olga's queue" was saved by someone else: only they or an admin may delete it/);

    const res = await remove(olga, mine.id);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).name, "Olga's queue");
    const { rows: audit } = await db.pool.query(`SELECT actor, target, details, changed FROM audit_log WHERE action = 'view.delete' AND target->>'id' = $1`, [mine.id]);
    assert.deepEqual(audit, [{ actor: 'olga', target: { view: "Olga's queue", page: 'jobs', id: mine.id }, details: { query: 'queue=olga' }, changed: 1 }]);

    assert.equal((await remove(adam, hers.id)).status, 200, "an admin deletes anyone's view");
    await refused(() => remove(olga, mine.id), 404, new RegExp(`no saved view with id ${mine.id}`));
    await refused(() => remove(adam, 'abc'), 404, /no such saved view/);
    assert.equal((await list(vic)).some((v) => [mine.id, hers.id].includes(v.id)), false);
  });

  test("a deleted user's views stay (without a creator): only an admin deletes them then", async () => {
    const uma = await login('uma', 'operator');
    const view = await (await save(uma, { name: 'Uma', page: 'jobs', query: 'queue=uma' })).json();
    await db.pool.query(`DELETE FROM users WHERE name = 'uma'`);
    const seen = (await list(adam, 'page=jobs')).find((v) => v.id === view.id);
    assert.deepEqual([seen?.createdBy, seen?.deletable], [null, true]);
  });
});

describe('hidden payload keys (LEASEHOLD_REDACT_KEYS)', () => {
  test("a view filtering a hidden key by value lists its value as [redacted] to a viewer, in the menu and the audit log; whole to an operator", async () => {
    const res = await save(olga, { name: 'One customer', page: 'jobs', query: `queue=billing&payload=${encodeURIComponent('auth.Secret="s3cr3t-v4lue"')}` });
    assert.equal(res.status, 201, await res.clone().text());
    const view = await res.json();
    const asViewer = (await list(vic, 'page=jobs')).find((v) => v.id === view.id);
    assert.equal(new URLSearchParams(asViewer!.query).get('payload'), 'auth.Secret=[redacted]');
    assert.equal(new URLSearchParams(asViewer!.query).get('queue'), 'billing', 'the other filters as saved');
    const audit = await send(routes, 'GET', '/api/audit', { cookie: vic });
    const text = JSON.stringify(await (await send(routes, 'GET', '/api/views', { cookie: vic })).json()) + (await audit.text());
    assert.equal(text.includes('s3cr3t'), false, 'the value is nowhere a viewer reads');
    const asOperator = (await list(omar, 'page=jobs')).find((v) => v.id === view.id);
    assert.equal(asOperator!.query, view.query, 'an operator (who may filter by it) reads it whole');
    assert.match(JSON.stringify(await (await send(routes, 'GET', '/api/audit', { cookie: omar })).json()), /s3cr3t-v4lue/);
    assert.equal((await remove(olga, view.id)).status, 200);
    assert.equal((await (await send(routes, 'GET', '/api/audit', { cookie: vic })).text()).includes('s3cr3t'), false, 'nor on its delete');
  });
});

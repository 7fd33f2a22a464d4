/**
 * The access-control tables (users, sessions, api_tokens, setup_tokens): every statement
 * that reads or writes them. Secrets (session ids, tokens, setup links) are random and
 * stored only as their sha256, so a database dump holds nothing that signs anyone in.
 */
import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';
import { type Executor, useTransaction } from '../db/client';
import { QueueError } from '../queue/errors';
import { decoyHash, hashPassword, MAX_PASSWORD, MIN_PASSWORD, verifyPassword } from './passwords';
import { ROLES, SCOPES_ABOVE, TOKEN_SCOPES, type Principal, type Role, type TokenScope } from './roles';

export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const secret = (bytes = 32) => randomBytes(bytes).toString('base64url');

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
export const SETUP_TTL_MS = 24 * 60 * 60 * 1000;
export const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;

export interface User {
  id: string;
  name: string;
  role: Role;
  createdAt: Date;
  disabledAt: Date | null;
}
const toUser = (r: any): User => ({ id: String(r.user_id), name: r.name, role: r.role, createdAt: r.created_at, disabledAt: r.disabled_at });

export function checkName(name: string) {
  if (!NAME_RE.test(name)) throw new QueueError('invalid_request', 'name: 1-64 letters, digits, _ . @ - (starting with a letter or digit)');
}
export function checkPassword(pw: string) {
  if (pw.length < MIN_PASSWORD || pw.length > MAX_PASSWORD) {
    throw new QueueError('invalid_request', `password: ${MIN_PASSWORD} to ${MAX_PASSWORD} characters`);
  }
}
export function checkRole(role: string): asserts role is Role {
  if (!(ROLES as readonly string[]).includes(role)) throw new QueueError('invalid_request', `role: one of ${ROLES.join(', ')}`);
}

// ------------------------------------------------------------------ users

/**
 * A demotion's revoke: the live API tokens these users made (or their tokens made: they carry
 * the maker's user id) whose scope is among `scopes` (SCOPES_ABOVE the new role). Returns their ids.
 */
const revokeTokensOf = (users: string, scopes: string) =>
  `UPDATE api_tokens SET revoked_at = now() WHERE created_by_user_id IN (${users}) AND revoked_at IS NULL AND scope = ANY(${scopes}::text[]) RETURNING token_id`;

export async function userCount(db: Executor): Promise<number> {
  const { rows } = await db.query('SELECT count(*)::int AS n FROM users WHERE disabled_at IS NULL');
  return rows[0].n;
}

/**
 * Adds a user, or (replace) sets the role and password of an existing one — and ends that
 * user's sessions in the same statement: a password is set again because the old one may
 * have leaked, and a session signed in with it must not outlive it. A replace with a lesser
 * role revokes the API tokens they made whose scope it could not use, as userSetRole does
 * (`revokedTokens`, empty otherwise).
 */
export async function userAdd(pool: pg.Pool, p: { name: string; role: string; password: string; replace?: boolean }): Promise<User & { revokedTokens: string[] }> {
  checkName(p.name);
  checkRole(p.role);
  checkPassword(p.password);
  // Hashed before the lock: scrypt's time is not spent holding up role changes.
  const hash = await hashPassword(p.password);
  return useTransaction(pool, async (db) => {
    if (p.replace) {
      // A replace with a lesser role demotes: the last active admin stays one.
      await lockUsers(db);
      const { rows: old } = await db.query('SELECT * FROM users WHERE name = $1', [p.name]);
      if (old[0] && p.role !== 'admin') await keepAnAdmin(db, toUser(old[0]), 'demote');
    }
    // Names that differ only by case are one name to people, and to the sign-in limiter (which
    // counts "Alice" and "alice" together): a sign-in as ALICE must not clear alice's failures.
    // (A --replace of an account that exists by its exact name is no new name: allowed, twin or not.)
    const { rows: twin } = await db.query(
      `SELECT name FROM users WHERE lower(name) = lower($1) AND name <> $1
          AND NOT ($2::boolean AND EXISTS (SELECT 1 FROM users WHERE name = $1)) LIMIT 1`,
      [p.name, !!p.replace],
    );
    if (twin[0]) throw new QueueError('state_forbids', `a user named ${twin[0].name} exists: names may not differ only by case`);
    const { rows } = await db.query(
      `WITH u AS (
         INSERT INTO users (name, role, password_hash) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO ${p.replace ? 'UPDATE SET role = EXCLUDED.role, password_hash = EXCLUDED.password_hash, disabled_at = NULL' : 'NOTHING'}
         RETURNING *
       ), s AS (DELETE FROM sessions WHERE user_id IN (SELECT user_id FROM u))
       , t AS (${revokeTokensOf('SELECT user_id FROM u', '$4')})
       SELECT u.*, ARRAY(SELECT token_id::text FROM t ORDER BY token_id) AS revoked_tokens FROM u`,
      [p.name, p.role, hash, SCOPES_ABOVE[p.role as Role]],
    );
    if (!rows[0]) throw new QueueError('state_forbids', `a user named ${p.name} exists (use --replace to set a new role and password)`);
    return { ...toUser(rows[0]), revokedTokens: rows[0].revoked_tokens };
  });
}

export async function userList(db: Executor): Promise<User[]> {
  const { rows } = await db.query('SELECT * FROM users ORDER BY name');
  return rows.map(toUser);
}

/** Disables a user and ends their sessions at once. */
export async function userDisable(pool: pg.Pool, name: string): Promise<boolean> {
  return useTransaction(pool, async (db) => {
    await lockUsers(db);
    const { rows: found } = await db.query('SELECT * FROM users WHERE name = $1 AND disabled_at IS NULL', [name]);
    if (found[0]) await keepAnAdmin(db, toUser(found[0]), 'disable');
    // Its sessions end, and the API tokens it made (or its tokens made) are revoked: an admin
    // leaving must not keep admin rights through a token minted the day before.
    const { rows } = await db.query(
      `WITH u AS (UPDATE users SET disabled_at = now() WHERE name = $1 AND disabled_at IS NULL RETURNING user_id)
       , s AS (DELETE FROM sessions WHERE user_id IN (SELECT user_id FROM u))
       , t AS (UPDATE api_tokens SET revoked_at = now() WHERE created_by_user_id IN (SELECT user_id FROM u) AND revoked_at IS NULL)
       SELECT user_id FROM u`,
      [name],
    );
    return rows.length > 0;
  });
}

/**
 * Role changes and disables take turns (reads of users, every request's session lookup, go
 * on meanwhile): two admins demoting or disabling each other at once cannot both pass
 * keepAnAdmin.
 */
const lockUsers = (c: Executor) => c.query('LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE');

/**
 * Refuses (409) to take the last active admin away — demoted, disabled or replaced by a
 * non-admin: the console would have no one left to manage users (only the CLI could add one).
 */
async function keepAnAdmin(c: Executor, user: User, how: 'demote' | 'disable'): Promise<void> {
  if (user.role !== 'admin' || user.disabledAt) return;
  const others = await c.query(`SELECT count(*)::int AS n FROM users WHERE role = 'admin' AND disabled_at IS NULL AND user_id <> $1`, [user.id]);
  if (others.rows[0].n > 0) return;
  throw new QueueError(
    'state_forbids',
    `${user.name} is the last active admin: make another user admin first, or the console would have no admin left${how === 'disable' ? ' (disabling them would end that)' : ''}`,
  );
}

export interface RoleChange {
  user: User;
  from: Role;
  changed: boolean;
  /** The ids of the API tokens revoked with a demotion. */
  revokedTokens: string[];
}

/**
 * Sets an active user's role. Their sessions stay signed in and act with the new role from
 * their next request (sessionPrincipal reads the role from users on every request; the
 * session row holds none). Demoted, the API tokens they made (or their tokens made) whose
 * scope the new role could not use are revoked with it: a demotion must not leave the old
 * rights in a token (as userDisable, for the same reason).
 *
 * Refused with 409 when it would demote the last active admin: the console would have no
 * one left to manage users (only the CLI could add one). The lock makes role changes take
 * turns, so two admins demoting each other at once cannot both pass that check; reads of
 * users (every request's session lookup) go on meanwhile.
 */
export async function userSetRole(pool: pg.Pool, name: string, role: string): Promise<RoleChange> {
  checkRole(role);
  return useTransaction(pool, async (c) => {
    await lockUsers(c);
    const { rows } = await c.query('SELECT * FROM users WHERE name = $1 AND disabled_at IS NULL', [name]);
    if (!rows[0]) throw new QueueError('not_found', `no active user ${JSON.stringify(name.slice(0, 64))}`);
    const before = toUser(rows[0]);
    if (before.role === role) return { user: before, from: before.role, changed: false, revokedTokens: [] };
    await keepAnAdmin(c, before, 'demote');
    const updated = await c.query('UPDATE users SET role = $2 WHERE user_id = $1 RETURNING *', [before.id, role]);
    const revoked = await c.query(revokeTokensOf('$1', '$2'), [before.id, SCOPES_ABOVE[role]]);
    return { user: toUser(updated.rows[0]), from: before.role, changed: true, revokedTokens: revoked.rows.map((r) => String(r.token_id)) };
  });
}

/**
 * The user, when the password is theirs (always costs one scrypt, known name or not), with
 * the hash it was checked against (sessionCreate makes a session only while it stands).
 */
export async function userVerify(db: Executor, name: string, password: string): Promise<(User & { passwordHash: string }) | null> {
  const { rows } = await db.query('SELECT * FROM users WHERE name = $1 AND disabled_at IS NULL', [name]);
  const ok = await verifyPassword(password, rows[0]?.password_hash ?? (await decoyHash()));
  return rows[0] && ok ? { ...toUser(rows[0]), passwordHash: rows[0].password_hash } : null;
}

// ------------------------------------------------------------------ sessions

/**
 * A new session: the cookie value (returned once) and its expiry; the table keeps its hash.
 * Only for a user not disabled and, given `passwordHash`, whose password is still the one
 * checked (a reset in the scrypt's time between would otherwise miss this session): else
 * 401, as a wrong password.
 */
export async function sessionCreate(db: Executor, userId: string, o: { passwordHash?: string } = {}): Promise<{ id: string; expiresAt: Date }> {
  const id = secret();
  const { rows } = await db.query(
    `INSERT INTO sessions (session_hash, user_id, expires_at)
     SELECT $1, user_id, now() + make_interval(secs => $3) FROM users
      WHERE user_id = $2 AND disabled_at IS NULL AND ($4::text IS NULL OR password_hash = $4)
     RETURNING expires_at`,
    [sha256(id), userId, SESSION_TTL_MS / 1000, o.passwordHash ?? null],
  );
  if (!rows[0]) throw new QueueError('unauthorized', 'wrong name or password');
  // Expired sessions are swept as new ones are made.
  await db.query('DELETE FROM sessions WHERE expires_at < now()');
  return { id, expiresAt: rows[0].expires_at };
}

export async function sessionPrincipal(db: Executor, id: string): Promise<Principal | null> {
  if (!id || id.length > 100) return null;
  const { rows } = await db.query(
    `SELECT u.user_id, u.name, u.role FROM sessions s JOIN users u USING (user_id)
      WHERE s.session_hash = $1 AND s.expires_at > now() AND u.disabled_at IS NULL`,
    [sha256(id)],
  );
  const r = rows[0];
  return r ? { kind: 'user', name: r.name, role: r.role, enqueue: false, via: 'cookie', userId: String(r.user_id) } : null;
}

export async function sessionEnd(db: Executor, id: string): Promise<void> {
  await db.query('DELETE FROM sessions WHERE session_hash = $1', [sha256(id)]);
}

// ------------------------------------------------------------------ API tokens

export interface ApiToken {
  id: string;
  name: string;
  scope: TokenScope;
  createdBy: string;
  /**
   * The user whose disable or demotion revokes it (userDisable, userSetRole): who made it, or
   * made the token that made it. null: made from the command line, or by a user since deleted.
   * (createdBy is only a label: "alice (user)", "root@host".)
   */
  owner: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}
/** The owner column every token read returns, of the api_tokens row `t`. */
const ownerOf = (t: string) => `(SELECT u.name FROM users u WHERE u.user_id = ${t}.created_by_user_id) AS owner`;
const toToken = (r: any): ApiToken => ({
  id: String(r.token_id),
  name: r.name,
  scope: r.scope,
  createdBy: r.created_by,
  owner: r.owner ?? null,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

export const TOKEN_PREFIX = 'lh_';
/** How a token id is told from a token name. */
const ALL_DIGITS = /^[0-9]+$/;

/** A new token: its secret is returned once (`lh_…`) and stored only as a hash. */
export async function tokenCreate(
  pool: pg.Pool,
  p: {
    name: string;
    scope: string;
    createdBy: string;
    /** Who made it, when an account did: its session's user, or the token it used (whose maker it inherits). */
    maker?: { userId?: string; tokenId?: string };
  },
): Promise<{ token: string; info: ApiToken }> {
  checkName(p.name);
  // `token revoke 3` means the token with id 3: a token named 3 could only be revoked by
  // its id, and revoking "it" by name would revoke another token. (Users keep such names:
  // nothing looks a user up by id.)
  if (ALL_DIGITS.test(p.name)) throw new QueueError('invalid_request', `name: ${p.name} is all digits and would read as a token id; add a letter`);
  if (!(TOKEN_SCOPES as readonly string[]).includes(p.scope)) throw new QueueError('invalid_request', `scope: one of ${TOKEN_SCOPES.join(', ')}`);
  const token = TOKEN_PREFIX + secret();
  return useTransaction(pool, async (db) => {
    // Takes turns with role changes and disables (lockUsers; SHARE waits for them and they for
    // it): a token made while its maker is demoted either sees the new role here and is
    // refused, or is committed before the demotion, whose revoke then finds it. Checked by
    // the route at the request's start only, a maker demoted meanwhile kept an admin token.
    await db.query('LOCK TABLE users IN SHARE MODE');
    if (p.maker?.userId || p.maker?.tokenId) {
      const { rows: m } = await db.query(
        `SELECT (SELECT role FROM users WHERE user_id = $1::bigint AND disabled_at IS NULL) AS user_role,
                (SELECT scope FROM api_tokens WHERE token_id = $2::bigint AND revoked_at IS NULL) AS token_scope`,
        [p.maker.userId ?? null, p.maker.tokenId ?? null],
      );
      const still = p.maker.userId ? m[0].user_role : m[0].token_scope;
      if (still !== 'admin') throw new QueueError('forbidden', `only an admin makes API tokens, and the ${p.maker.userId ? 'user' : 'token'} asking is ${still ? `now ${still}` : 'no longer active'}`);
    }
    const { rows } = await db.query(
      `INSERT INTO api_tokens (name, token_hash, scope, created_by, created_by_user_id)
       VALUES ($1, $2, $3, $4, coalesce($5::bigint, (SELECT created_by_user_id FROM api_tokens WHERE token_id = $6::bigint)))
       RETURNING *, ${ownerOf('api_tokens')}`,
      [p.name, sha256(token), p.scope, p.createdBy.slice(0, 200), p.maker?.userId ?? null, p.maker?.tokenId ?? null],
    );
    return { token, info: toToken(rows[0]) };
  });
}

export async function tokenList(db: Executor): Promise<ApiToken[]> {
  const { rows } = await db.query(`SELECT t.*, ${ownerOf('t')} FROM api_tokens t ORDER BY token_id`);
  return rows.map(toToken);
}

/**
 * Revokes by id (an argument of all digits) or by name; the next request with it gets a 401.
 * A name held by more than one live token (a rotation: the new token made, the old one not yet
 * revoked) is refused, naming their ids, unless `all` says every one of them goes.
 */
export async function tokenRevoke(db: Executor, idOrName: string, o: { all?: boolean } = {}): Promise<ApiToken[]> {
  if (ALL_DIGITS.test(idOrName)) {
    if (o.all) throw new QueueError('invalid_request', `${idOrName} is a token id: --all applies to a name`);
    if (!/^[1-9][0-9]{0,17}$/.test(idOrName)) return []; // no token has this id
    const { rows } = await db.query(`UPDATE api_tokens SET revoked_at = now() WHERE token_id = $1::bigint AND revoked_at IS NULL RETURNING *, ${ownerOf('api_tokens')}`, [idOrName]);
    return rows.map(toToken);
  }
  const live = await db.query('SELECT token_id FROM api_tokens WHERE name = $1 AND revoked_at IS NULL ORDER BY token_id', [idOrName]);
  const ids = live.rows.map((r) => String(r.token_id));
  if (ids.length > 1 && !o.all) {
    throw new QueueError(
      'invalid_request',
      `${ids.length} live tokens are named ${idOrName} (ids ${ids.join(', ')}): revoke one by id, or all of them with --all`,
    );
  }
  // The tokens counted above, and no other: one made meanwhile under this name stays live.
  const { rows } = await db.query(
    `WITH r AS (UPDATE api_tokens SET revoked_at = now() WHERE token_id = ANY($1::bigint[]) AND revoked_at IS NULL RETURNING *)
     SELECT r.*, ${ownerOf('r')} FROM r ORDER BY token_id`,
    [ids],
  );
  return rows.map(toToken);
}

/**
 * The principal behind a bearer token; revoked tokens are refused on the very next request.
 * One statement: the lookup, and last_used_at touched at most once a minute (database clock),
 * so a busy producer's requests cost no write each.
 */
export async function tokenPrincipal(db: Executor, token: string): Promise<Principal | null> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 100) return null;
  const { rows } = await db.query(
    `WITH t AS (SELECT token_id, name, scope FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL),
          touched AS (UPDATE api_tokens SET last_used_at = now()
                       WHERE token_id IN (SELECT token_id FROM t)
                         AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute'))
     SELECT token_id, name, scope FROM t`,
    [sha256(token)],
  );
  const r = rows[0];
  if (!r) return null;
  const role = r.scope === 'enqueue' ? null : (r.scope as Role);
  return { kind: 'token', name: r.name, role, enqueue: r.scope === 'enqueue', via: 'bearer', tokenId: String(r.token_id) };
}

// ------------------------------------------------------------------ first-admin setup

/** A one-time setup link's token (only while there are no users). */
export async function setupTokenCreate(db: Executor): Promise<string> {
  const token = secret();
  await db.query('DELETE FROM setup_tokens WHERE expires_at < now() OR used_at IS NOT NULL');
  await db.query(`INSERT INTO setup_tokens (token_hash, expires_at) VALUES ($1, now() + make_interval(secs => $2))`, [
    sha256(token),
    SETUP_TTL_MS / 1000,
  ]);
  return token;
}

/**
 * Uses a setup token to create the first admin, in one transaction: the token must be
 * unused and unexpired, and there must still be no users (a second use, or a race with
 * `leasehold user add`, changes nothing).
 */
export async function setupFirstAdmin(
  pool: pg.Pool,
  p: { token: string; name: string; password: string },
): Promise<User> {
  checkName(p.name);
  checkPassword(p.password);
  const hash = await hashPassword(p.password);
  return useTransaction(pool, async (c) => {
    await c.query('LOCK TABLE users IN EXCLUSIVE MODE');
    const used = await c.query(`UPDATE setup_tokens SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING 1`, [
      sha256(p.token),
    ]);
    if (!used.rows[0]) throw new QueueError('forbidden', 'this setup link is invalid, used or expired: restart `npm start` for a new one, or use `npx leasehold user add`');
    const n = await c.query('SELECT count(*)::int AS n FROM users');
    if (n.rows[0].n > 0) throw new QueueError('forbidden', 'an operator exists already: sign in, or ask an admin');
    const { rows } = await c.query(`INSERT INTO users (name, role, password_hash) VALUES ($1, 'admin', $2) RETURNING *`, [p.name, hash]);
    return toUser(rows[0]);
  });
}

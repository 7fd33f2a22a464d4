/**
 * What the access-control suites share: every route handler under app/api loaded from
 * disk, requests with a session cookie or a bearer token, and a fingerprint of every table
 * an operator could change (to prove that refused requests changed nothing).
 */
import type pg from 'pg';
import { loadRoutes } from '../api-routes';

export const ORIGIN = 'http://console.test';

/** encodeURIComponent that also takes lone surrogates (as the bytes of an invalid UTF-8 sequence, as a hostile client would send them). */
export function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return [...s].map((ch) => (/[\ud800-\udfff]/.test(ch) && ch.length === 1 ? '%ED%A0%80' : encodeURIComponent(ch))).join('');
  }
}

export type Routes = Awaited<ReturnType<typeof loadRoutes>>;

export interface Send {
  cookie?: string;
  bearer?: string;
  origin?: string | null;
  headers?: Record<string, string>;
  body?: unknown;
  raw?: string;
  query?: string;
  params?: Record<string, string>;
  /** Aborts the request (closes a stream the handler answered with). */
  signal?: AbortSignal;
}

/** Calls the handler for `method path` as a browser on ORIGIN would (Origin and the console's header), unless told otherwise. */
export async function send(routes: Routes, method: string, path: string, s: Send = {}): Promise<Response> {
  const route = routes.find((r) => r.path === path);
  if (!route) throw new Error(`no route file serves ${path}`);
  // Next serves a HEAD with the route's GET, as here.
  const handler = route.methods.get(method === 'HEAD' ? 'get' : method.toLowerCase());
  if (!handler) throw new Error(`${path} exports no ${method}`);
  const url = ORIGIN + path.replace(/\{(\w+)\}/g, (_, k) => enc(s.params?.[k] ?? k)) + (s.query ? `?${s.query}` : '');
  const headers: Record<string, string> = { host: new URL(ORIGIN).host, ...s.headers };
  if (s.origin !== null && method !== 'GET') headers.origin = s.origin ?? ORIGIN;
  if (s.cookie) headers.cookie = `leasehold_session=${s.cookie}`;
  if (s.bearer) headers.authorization = `Bearer ${s.bearer}`;
  const body = s.raw ?? (s.body === undefined ? undefined : JSON.stringify(s.body));
  if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  if (!('x-leasehold-request' in headers) && s.cookie) headers['x-leasehold-request'] = '1';
  return handler(new Request(url, { method, headers, body, signal: s.signal }), { params: Promise.resolve(s.params ?? {}) });
}

/** A fingerprint of every row an operator action could change (jobs, queue controls, schedules, users, sessions, tokens, saved views). */
export async function stateOf(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query(`
    SELECT md5(coalesce((SELECT string_agg(t::text, '|' ORDER BY job_id) FROM jobs t), '')) AS jobs,
           md5(coalesce((SELECT string_agg(t::text, '|' ORDER BY job_id, attempt) FROM job_attempts t), '')) AS attempts,
           md5(coalesce((SELECT string_agg(t::text, '|' ORDER BY name) FROM queues t), '')) AS queues,
           md5(coalesce((SELECT string_agg(t::text, '|' ORDER BY name) FROM schedules t), '')) AS schedules,
           md5(coalesce((SELECT string_agg(t::text, '|' ORDER BY user_id) FROM users t), '')) AS users,
           md5(coalesce((SELECT string_agg((t.token_id, t.name, t.scope, t.revoked_at)::text, '|' ORDER BY token_id) FROM api_tokens t), '')) AS tokens,
           md5(coalesce((SELECT string_agg(t::text, '|' ORDER BY view_id) FROM saved_views t), '')) AS views`);
  return JSON.stringify(rows[0]);
}

export async function auditCount(pool: pg.Pool): Promise<number> {
  return (await pool.query('SELECT count(*)::int AS n FROM audit_log')).rows[0].n;
}

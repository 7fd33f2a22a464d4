/**
 * The one server-side gate every route handler passes (lib/http/respond.ts `route()`):
 * who is asking (a session cookie, a bearer token, or nobody), whether their role allows
 * the route, and, for state-changing requests that a browser could forge, the CSRF checks.
 *
 * LEASEHOLD_AUTH=off (local demos and tests only) lets every request act as an admin
 * called "auth off", and says so in the log and on every page.
 */
import { log } from '../log';
import { QueueError } from '../queue/errors';
import { serverContext } from '../server/context';
import { allows, type Principal, type Requirement } from './roles';
import { sessionPrincipal, tokenPrincipal } from './store';

export const SESSION_COOKIE = 'leasehold_session';
/** The header the console's fetches send: a custom header makes every action a non-simple (preflighted) request. */
export const CSRF_HEADER = 'x-leasehold-request';

let warned = false;
export function authOff(): boolean {
  const off = (process.env.LEASEHOLD_AUTH ?? '').trim().toLowerCase() === 'off';
  if (off && !warned) {
    warned = true;
    log.warn('LEASEHOLD_AUTH=off: SIGN-IN IS OFF. Anyone who can reach this port can read and change every job. Local demos and tests only.');
  }
  return off;
}

export const AUTH_OFF_PRINCIPAL: Principal = { kind: 'anonymous', name: 'auth off', role: 'admin', enqueue: true, via: 'off' };

export function cookieValue(req: Request, name: string): string | null {
  const header = req.headers.get('cookie');
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return null; // a forged cookie that is not percent-encoding: no session (401), not a 500
      }
    }
  }
  return null;
}

/**
 * The API token an Authorization header carries: undefined without a Bearer header, null for a
 * malformed one. Another scheme is not ours (a proxy's HTTP Basic sign-in, sent by the browser
 * with every request): the session cookie decides then, as if the header were not there.
 */
function bearerOf(req: Request): string | null | undefined {
  const authz = req.headers.get('authorization')?.trim();
  if (!authz || !/^Bearer(\s|$)/i.test(authz)) return undefined;
  return /^Bearer\s+(\S+)$/i.exec(authz)?.[1] ?? null;
}

/** Who sent this request, or null (no or bad credentials). */
export async function authenticate(req: Request): Promise<Principal | null> {
  if (authOff()) return AUTH_OFF_PRINCIPAL;
  const { pool } = serverContext();
  const bearer = bearerOf(req);
  if (bearer !== undefined) return bearer ? tokenPrincipal(pool, bearer) : null;
  const sid = cookieValue(req, SESSION_COOKIE);
  return sid ? sessionPrincipal(pool, sid) : null;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The host the browser addressed, as sent (a port included). X-Forwarded-Host is what the
 * client says unless a proxy was declared (LEASEHOLD_TRUST_PROXY=1): a forged one would
 * let a cross-site page name its own origin as the host and pass the Origin check. Behind a
 * declared proxy, its last entry, the one the proxy appended (the ones before are whatever
 * the client sent); as hostProblem() reads it.
 */
export function requestHost(req: Request): string {
  const trustProxy = process.env.LEASEHOLD_TRUST_PROXY === '1';
  const forwarded = trustProxy ? (req.headers.get('x-forwarded-host') ?? '').split(',').map((h) => h.trim()).filter(Boolean).pop() : undefined;
  return (forwarded || req.headers.get('host') || new URL(req.url).host).trim().toLowerCase();
}

/**
 * With sign-in off, why this request's Host is not one this console answers to, or null.
 * Nothing then stands between a browser and the API but the Origin checks, and DNS
 * rebinding gets round those: a page on attacker.example whose name is made to point at
 * 127.0.0.1 sends Host and Origin attacker.example, which match. So the name must be one
 * of this machine's: an IP address (a rebinding needs a name), localhost, HOST, or one
 * listed in LEASEHOLD_ALLOWED_HOSTS. (With sign-in on, the browser sends no session cookie
 * to the rebound name: nothing to take.)
 */
export function hostProblem(req: Request): string | null {
  const raw = requestHost(req);
  let name: string;
  try {
    name = new URL(`http://${raw}`).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  } catch {
    return 'the Host header is not a host name';
  }
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(name) || name.includes(':')) return null;
  if (name === 'localhost' || name.endsWith('.localhost')) return null;
  const allowed = [process.env.HOST ?? '', ...(process.env.LEASEHOLD_ALLOWED_HOSTS ?? '').split(',')].map((h) => h.trim().toLowerCase()).filter(Boolean);
  if (allowed.includes(name)) return null;
  return `with sign-in off this console answers to its own names only (localhost, an IP address, HOST, LEASEHOLD_ALLOWED_HOSTS), not ${name.slice(0, 100)}: a page elsewhere could reach it by DNS rebinding`;
}

export function isHttps(req: Request): boolean {
  const proto = req.headers.get('x-forwarded-proto')?.split(',')[0]?.trim();
  return proto ? proto === 'https' : new URL(req.url).protocol === 'https:';
}

/**
 * Why this state-changing request may be a cross-site forgery, or null. Cookie sessions
 * (and auth off, where the browser needs no credentials at all) must come from this
 * origin: a foreign Origin/Referer or `Sec-Fetch-Site: cross-site` is refused; with a
 * session, the Origin (or Referer) must be present and the request must be non-simple
 * (JSON or the console's header), which a cross-site form cannot send without a preflight.
 * Bearer-token requests carry no ambient credentials and are not checked.
 */
export function csrfProblem(req: Request, via: Principal['via'] | 'none'): string | null {
  if (SAFE_METHODS.has(req.method.toUpperCase()) || via === 'bearer') return null;
  const site = req.headers.get('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') return `a ${site} request may not change anything`;
  let origin = req.headers.get('origin');
  if (!origin || origin === 'null') {
    const referer = req.headers.get('referer');
    try {
      origin = referer ? new URL(referer).origin : origin;
    } catch {
      return 'the Referer header is not a URL';
    }
  }
  if (origin && origin !== 'null') {
    let host: string;
    try {
      host = new URL(origin).host.toLowerCase();
    } catch {
      return 'the Origin header is not a URL';
    }
    if (host !== requestHost(req)) return `requests from ${origin.slice(0, 100)} may not change anything here`;
  } else if (via === 'cookie' || origin === 'null') {
    return 'a signed-in browser request must carry its Origin';
  }
  if (via === 'cookie') {
    const ct = req.headers.get('content-type') ?? '';
    if (!/^application\/json\b/i.test(ct) && !req.headers.get(CSRF_HEADER)) {
      return `send Content-Type: application/json or the ${CSRF_HEADER} header`;
    }
  }
  return null;
}

/**
 * The gate: 401 without valid credentials, 403 when the role does not allow the route or
 * the request fails the CSRF checks. Returns who is asking.
 */
export async function authorize(req: Request, need: Requirement): Promise<Principal | null> {
  if (authOff()) {
    const problem = hostProblem(req);
    if (problem) throw new QueueError('forbidden', problem);
  }
  if (need === 'public') {
    const problem = csrfProblem(req, authOff() ? 'off' : 'none');
    if (problem) throw new QueueError('csrf', problem);
    return authOff() ? AUTH_OFF_PRINCIPAL : null;
  }
  const who = await authenticate(req);
  if (!who) {
    throw new QueueError('unauthorized', bearerOf(req) !== undefined ? 'the API token is invalid or revoked' : 'sign in first (or send an API token as Authorization: Bearer)');
  }
  const problem = csrfProblem(req, who.via);
  if (problem) throw new QueueError('csrf', problem);
  if (!allows(who, need)) {
    throw new QueueError('forbidden', `${who.kind === 'token' ? 'this token' : who.name} may not do this: it needs ${need === 'enqueue' ? 'an enqueue token or the operator role' : `the ${need} role`}`);
  }
  return who;
}

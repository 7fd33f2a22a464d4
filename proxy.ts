/**
 * Runs in front of every page request (Next 16's proxy, formerly middleware):
 *  - security headers on every page: a Content-Security-Policy with a fresh nonce per
 *    page (no 'unsafe-inline' scripts; Next puts the nonce on its own scripts), nosniff,
 *    frame-ancestors 'none' and X-Frame-Options DENY, a strict Referrer-Policy;
 *  - pages without a session cookie are sent to /signin (unless LEASEHOLD_AUTH=off).
 *
 * This is only the first gate for pages: the pages hold no data of their own, and every
 * API route checks the session (or token) and the role on the server (lib/auth/gate.ts).
 */
import { type NextRequest, NextResponse } from 'next/server';
import { DATA_CSP, SECURITY_HEADERS } from './lib/http/security-headers';

const SESSION_COOKIE = 'leasehold_session';
const OPEN_PAGES = new Set(['/signin', '/setup']);

function csp(nonce: string, dev: boolean): string {
  return [
    `default-src 'self'`,
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? ` 'unsafe-eval'` : ''}`,
    // Style attributes (charts, widths) need inline styles; scripts never run inline.
    `style-src 'self' 'unsafe-inline'`,
    `img-src 'self' data: blob:`,
    `font-src 'self'`,
    `connect-src 'self'`,
    `object-src 'none'`,
    `base-uri 'self'`,
    `form-action 'self'`,
    `frame-ancestors 'none'`,
  ].join('; ');
}

function secure(res: NextResponse, policy: string) {
  res.headers.set('content-security-policy', policy);
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.headers.set(name, value);
  return res;
}

export function proxy(req: NextRequest) {
  const { pathname, search } = req.nextUrl;
  const authOff = (process.env.LEASEHOLD_AUTH ?? '').trim().toLowerCase() === 'off';
  const isPage = !pathname.startsWith('/_next/') && !/\.[a-z0-9]+$/i.test(pathname);
  if (isPage && !authOff && !OPEN_PAGES.has(pathname) && !req.cookies.get(SESSION_COOKIE)?.value) {
    const to = new URL('/signin', req.url);
    if (pathname !== '/') to.searchParams.set('next', (pathname + search).slice(0, 500));
    return secure(NextResponse.redirect(to, 307), DATA_CSP);
  }
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64');
  const policy = csp(nonce, process.env.NODE_ENV === 'development');
  const headers = new Headers(req.headers);
  headers.set('x-nonce', nonce);
  headers.set('content-security-policy', policy);
  return secure(NextResponse.next({ request: { headers } }), policy);
}

export const config = {
  // Not /api or /api/…: those answers get their headers from next.config.ts, without a proxy
  // run; nor the build's static files. Anchored: "/_next/staticfoo" or "/favicon.ico" (there is
  // none) is a page — the not-found one, the console's signed-in shell — and gets every header,
  // or another site could frame it.
  matcher: [{ source: '/((?!api(?:/|$)|_next/static/|_next/image$).*)' }],
};

/**
 * The security headers of every answer. Pages get theirs from proxy.ts, which adds a
 * Content-Security-Policy with a fresh nonce per page; API answers get them from
 * next.config.ts as static headers, so an API request (what every console tab and every
 * producer sends) does not run the proxy at all.
 */
export const SECURITY_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

/**
 * For answers that are data, never a document: nothing loads from them, nothing frames them.
 * (worker/http-guard.mjs, preloaded into `next start` without TypeScript, writes it out
 * for the 400 it answers before Next runs.)
 */
export const DATA_CSP = `default-src 'none'; frame-ancestors 'none'`;

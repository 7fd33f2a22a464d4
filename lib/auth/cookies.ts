/** The session cookie: httpOnly, SameSite=Lax, Secure when the browser came over HTTPS. */
import { isHttps, SESSION_COOKIE } from './gate';

export function sessionCookie(req: Request, value: string, expiresAt: Date): string {
  const parts = [`${SESSION_COOKIE}=${encodeURIComponent(value)}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Expires=${expiresAt.toUTCString()}`];
  if (isHttps(req)) parts.push('Secure');
  return parts.join('; ');
}

export function clearedSessionCookie(req: Request): string {
  return [`${SESSION_COOKIE}=`, 'Path=/', 'HttpOnly', 'SameSite=Lax', 'Max-Age=0', ...(isHttps(req) ? ['Secure'] : [])].join('; ');
}

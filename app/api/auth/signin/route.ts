import { sessionCookie } from '@/lib/auth/cookies';
import { clientAddress, signInAttempt } from '@/lib/auth/rate-limit';
import { sessionCreate, userVerify } from '@/lib/auth/store';
import { json, readJson, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { signInBody } from '@/lib/http/schemas';
import { QueueError } from '@/lib/queue/errors';
import { serverContext } from '@/lib/server/context';

/**
 * POST /api/auth/signin {name, password} — a session cookie (httpOnly, SameSite=Lax,
 * Secure over HTTPS). Failures are limited per account and per address (429 with
 * Retry-After); a wrong name and a wrong password get the same answer.
 */
export const POST = route('public', async (req: Request) => {
  const body = signInBody.parse(await readJson(req, 4096));
  // Counted as a failure from here until the password proves right.
  const attempt = signInAttempt(body.name, clientAddress(req));
  if (attempt.wait > 0) {
    return json(new QueueError('rate_limited', `too many failed sign-ins: try again in ${attempt.wait} s`).toJSON(), 429, { 'retry-after': String(attempt.wait) });
  }
  const { pool } = serverContext();
  let user;
  try {
    user = await userVerify(pool, body.name, body.password);
  } catch (err) {
    attempt.noGuess(); // the database away is no wrong password: it must not lock the account
    throw err;
  }
  if (!user) throw new QueueError('unauthorized', 'wrong name or password');
  attempt.succeeded();
  // Only while the password is still the one just checked: a reset during the check ends
  // the sessions it finds, and must not miss this one.
  const session = await sessionCreate(pool, user.id, { passwordHash: user.passwordHash });
  return json({ user: { name: user.name, role: user.role } }, 200, { 'set-cookie': sessionCookie(req, session.id, session.expiresAt) });
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');

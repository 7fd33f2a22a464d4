import { sessionCookie } from '@/lib/auth/cookies';
import { clientAddress, SETUP_LINK, signInAttempt } from '@/lib/auth/rate-limit';
import { sessionCreate, setupFirstAdmin } from '@/lib/auth/store';
import { actorOf, auditRecord } from '@/lib/audit/log';
import { json, readJson, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { setupBody } from '@/lib/http/schemas';
import { QueueError } from '@/lib/queue/errors';
import { serverContext } from '@/lib/server/context';

/**
 * POST /api/auth/setup {token, name, password} — the first admin, from the one-time link
 * `npm start` prints while there are no users. Works once; signs the new admin in.
 */
export const POST = route('public', async (req: Request) => {
  const body = setupBody.parse(await readJson(req, 4096));
  // Counted as a failed try from here until the link proves right (see signInAttempt).
  const attempt = signInAttempt(SETUP_LINK, clientAddress(req));
  if (attempt.wait > 0) {
    return json(new QueueError('rate_limited', `too many failed attempts: try again in ${attempt.wait} s`).toJSON(), 429, { 'retry-after': String(attempt.wait) });
  }
  const { pool } = serverContext();
  let user;
  try {
    user = await setupFirstAdmin(pool, body);
  } catch (e) {
    // Only a wrong link is a guess; anything else (a name taken, the database away) is not.
    if (!(e instanceof QueueError && e.code === 'forbidden')) attempt.noGuess();
    throw e;
  }
  attempt.succeeded();
  await auditRecord(pool, {
    ...actorOf({ kind: 'user', name: user.name, role: 'admin', enqueue: false, via: 'cookie' }),
    action: 'user.setup',
    target: { user: user.name },
    changed: 1,
    skipped: 0,
    details: { role: 'admin', via: 'setup link' },
  });
  const session = await sessionCreate(pool, user.id);
  return json({ user: { name: user.name, role: user.role } }, 201, { 'set-cookie': sessionCookie(req, session.id, session.expiresAt) });
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');

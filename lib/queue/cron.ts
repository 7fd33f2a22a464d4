/**
 * Cron expressions for recurring jobs (cron-parser: five fields, or six with seconds
 * first). Ticks are computed from a given instant — the database clock — never from the
 * worker's clock.
 */
import { CronExpressionParser } from 'cron-parser';
import { QueueError } from './errors';

/**
 * The first tick strictly after `after`. `seed` (the schedule's name) fixes what an `H` in
 * the expression stands for: without it every parse drew a new random value, and an
 * hourly `H * * * *` ran several times an hour at random minutes. Throws
 * QueueError('invalid_request') for a bad expression or zone.
 */
export function nextTick(cron: string, timezone: string, after: Date, seed?: string): Date {
  const bad = (why: string) => new QueueError('invalid_request', `cron ${JSON.stringify(cron)} (${timezone}): ${why}`);
  // An empty expression would run every minute; `local` or `system` would tick in each
  // worker host's own zone: both are accepted by the parser, neither is what was meant.
  if (!cron.trim()) throw bad('an empty expression');
  if (!isTimeZone(timezone)) throw bad(`not a time zone name (an IANA name such as UTC or Europe/Paris)`);
  try {
    return CronExpressionParser.parse(cron, { currentDate: after, tz: timezone, hashSeed: seed }).next().toDate();
  } catch (err) {
    throw bad((err as Error).message);
  }
}

/** An IANA time zone name this runtime knows (not `local` or `system`, which the parser takes too). */
function isTimeZone(tz: string): boolean {
  if (/^(local|system)$/i.test(tz)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

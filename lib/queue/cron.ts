/**
 * Cron expressions for recurring jobs (cron-parser: five fields, or six with seconds
 * first). Ticks are computed from a given instant — the database clock — never from the
 * worker's clock.
 */
import { CronExpressionParser } from 'cron-parser';
import { QueueError } from './errors';

export { cronUsesHash } from './job';

/** cron-parser's aliases (its PredefinedExpressions, which it does not export), for an error's text. */
const CRON_ALIASES = '@yearly, @annually, @monthly, @weekly, @daily, @hourly, @minutely, @secondly, @weekdays, @weekends';

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
  // Fewer fields the parser fills in from the right: "30 4 1" (meant as 04:30 on the 1st)
  // would run every minute of every Monday in April.
  const fields = cron.trim().split(/\s+/).length;
  if (!cron.trim().startsWith('@') && fields !== 5 && fields !== 6) {
    throw bad(`${fields} field${fields === 1 ? '' : 's'}: five are needed (minute hour day-of-month month day-of-week), or six with seconds first`);
  }
  if (!isTimeZone(timezone)) throw bad(`not a time zone name (an IANA name such as UTC or Europe/Paris)`);
  // Around a half-hour daylight-saving change (Pacific/Chatham) the parser can answer with a
  // time before `after`: taken as the next tick, the schedule would be due again at once, for
  // ever. Looked for again a minute later each time (up to three hours): a tick inside the
  // stretch the parser gets wrong may be missed, none is run twice.
  let from = after;
  for (let k = 0; k < 180; k++) {
    let next: Date;
    try {
      next = CronExpressionParser.parse(cron, { currentDate: from, tz: timezone, hashSeed: seed }).next().toDate();
    } catch (err) {
      // The parser's own words for an unknown alias ('cannot resolve alias "reb"' for @reboot) name a part of it.
      if (cron.trim().startsWith('@')) throw bad(`not an alias the parser knows (${CRON_ALIASES})`);
      throw bad((err as Error).message);
    }
    if (next > after) return next;
    from = new Date(Math.max(from.getTime(), next.getTime()) + 60_000);
  }
  throw bad(`no tick after ${after.toISOString()} could be computed in this time zone (a daylight-saving change the cron library mishandles)`);
}

/** How many missed ticks nextTickAfter walks past before it counts from `now` instead. */
export const SERIES_WALK_MAX = 1000;

/**
 * The first tick of the series through `from` (a tick itself, the one just run or the first
 * not run) that is after `now`: the ticks missed meanwhile are walked past, not counted from
 * `now`. Counted from `now`, a daily 01:30 in New York that ran at 01:30 EDT and was taken
 * again late, after 01:00 EST on the night clocks go back, would run a second time at 01:30
 * EST: the parser's series from the tick has one 01:30 a night, its answer from a moment in
 * the repeated hour the second. Past SERIES_WALK_MAX missed ticks (an every-minute schedule
 * away for a day) it counts from `now`, which a double run at a clock change can then follow.
 */
export function nextTickAfter(cron: string, timezone: string, from: Date, now: Date, seed?: string): Date {
  let next = from;
  for (let k = 0; next <= now; k++) next = k < SERIES_WALK_MAX ? nextTick(cron, timezone, next, seed) : nextTick(cron, timezone, now, seed);
  return next;
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

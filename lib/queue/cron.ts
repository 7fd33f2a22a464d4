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
  // The parser's own words for an unknown alias ('cannot resolve alias "reb"' for @reboot) name a part of it.
  const cronError = (message: string) => bad(cron.trim().startsWith('@') ? `not an alias the parser knows (${CRON_ALIASES})` : message);
  const parse = (currentDate: Date, endDate?: Date) => {
    try {
      return CronExpressionParser.parse(cron, { currentDate, endDate, tz: timezone, hashSeed: seed });
    } catch (err) {
      throw cronError((err as Error).message);
    }
  };
  // Around a half-hour daylight-saving change the parser can answer with a time before
  // `after` (Pacific/Chatham): taken as the next tick, the schedule would be due again at
  // once, for ever. Looked for again a minute later each time (up to three hours): a tick
  // inside the stretch the parser gets wrong may be missed, none is run twice.
  let from = after;
  for (let k = 0; k < 180; k++) {
    let next: Date;
    try {
      next = parse(from).next().toDate();
    } catch (err) {
      // Giving up on a valid expression (below); anything else is the expression's fault.
      if ((err as Error).message !== LOOP_LIMIT_EXCEEDED) throw cronError((err as Error).message);
      const across = tickAcrossChange(parse, after, timezone);
      if (across) return across;
      break;
    }
    if (next > after) return next;
    from = new Date(Math.max(from.getTime(), next.getTime()) + 60_000);
  }
  throw bad(`no tick after ${after.toISOString()} could be computed in this time zone (a daylight-saving change the cron library mishandles)`);
}

/** What cron-parser throws when it gives up looking (its LOOPS_LIMIT_EXCEEDED_ERROR_MESSAGE). */
const LOOP_LIMIT_EXCEEDED = 'Invalid expression, loop limit exceeded';

type Parse = (currentDate: Date, endDate?: Date) => ReturnType<typeof CronExpressionParser.parse>;

/**
 * The tick after `after` where the parser gave up ("loop limit exceeded") on a valid
 * expression whose next tick lies across a daylight-saving change: Australia/Lord_Howe's
 * clocks go back half an hour, and a daily 0 1 * * * asked from its tick before the change
 * threw. Taken as a bad expression, that stopped the schedule for good (every tick and every
 * resume failed on the same stored tick). Found in three parts: before the change by the
 * parser stopped short of it; around it (an hour either side) minute by minute, a time whose
 * wall clock is not past `after`'s being the repeated stretch, not run twice; after it by the
 * parser again. Null when there is no change within a year, or the parser fails past it too.
 */
function tickAcrossChange(parse: Parse, after: Date, timezone: string): Date | null {
  const change = nextOffsetChange(after, timezone);
  if (!change) return null;
  const before = new Date(change.getTime() - 3_600_000);
  if (before > after) {
    try {
      const next = parse(after, before).next().toDate();
      if (next > after) return next;
    } catch {
      // no tick before the stretch (out of the time span), or the parser failed here too
    }
  }
  const expr = parse(after);
  const seconds = expr.fields.second.values;
  const wall = (d: Date) => wallClock(d, timezone);
  const afterWall = wall(after);
  for (let m = Math.max(before.getTime(), Math.floor(after.getTime() / 60_000) * 60_000); m <= change.getTime() + 3_600_000; m += 60_000) {
    for (const sec of seconds) {
      const t = new Date(m + sec * 1000);
      if (t > after && expr.includesDate(t) && wall(t) > afterWall) return t;
    }
  }
  try {
    const next = parse(new Date(change.getTime() + 3_600_000)).next().toDate();
    return next > after ? next : null;
  } catch {
    return null;
  }
}

/** The first minute after `from` whose UTC offset in `timezone` differs from `from`'s, within a year; null if none. */
function nextOffsetChange(from: Date, timezone: string): Date | null {
  const offset = (t: number) => wallClock(new Date(t), timezone, true);
  const at = offset(from.getTime());
  let lo = from.getTime();
  let hi = lo;
  for (let day = 0; day < 400 && offset(hi) === at; day++) {
    lo = hi;
    hi += 86_400_000;
  }
  if (offset(hi) === at) return null;
  while (hi - lo > 60_000) {
    const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
    if (offset(mid) === at) lo = mid;
    else hi = mid;
  }
  return new Date(hi);
}

const wallFormats = new Map<string, Intl.DateTimeFormat>();
/** `d`'s wall clock in `timezone` as sortable text ("2026-04-05 01:30:00"), or with `offset` its UTC offset ("GMT+10:30"). */
function wallClock(d: Date, timezone: string, offset = false): string {
  const key = `${timezone} ${offset}`;
  let f = wallFormats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', offset ? { timeZone: timezone, timeZoneName: 'longOffset' } : { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
    wallFormats.set(key, f);
  }
  const parts = f.formatToParts(d);
  if (offset) return parts.find((p) => p.type === 'timeZoneName')?.value ?? '';
  const v = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return `${v('year')}-${v('month')}-${v('day')} ${v('hour')}:${v('minute')}:${v('second')}`;
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

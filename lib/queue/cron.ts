/**
 * Cron expressions for recurring jobs (cron-parser: five fields, or six with seconds
 * first). Ticks are computed from a given instant — the database clock — never from the
 * worker's clock.
 */
import { CronExpressionParser } from 'cron-parser';
import { QueueError } from './errors';

/** The first tick strictly after `after`. Throws QueueError('invalid_request') for a bad expression or zone. */
export function nextTick(cron: string, timezone: string, after: Date): Date {
  try {
    return CronExpressionParser.parse(cron, { currentDate: after, tz: timezone }).next().toDate();
  } catch (err) {
    throw new QueueError('invalid_request', `cron ${JSON.stringify(cron)} (${timezone}): ${(err as Error).message}`);
  }
}

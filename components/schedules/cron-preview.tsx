import { duration } from '@/lib/ui/format';
import { UserText } from '../ui/user-text';

/** A tick in the schedule's own zone, named, as its cron reads (`Mon 07 Dec, 03:00:00 CET`). */
function inZone(iso: string, timeZone: string): string {
  try {
    return new Date(iso).toLocaleString('en-GB', { timeZone, weekday: 'short', day: '2-digit', month: 'short', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });
  } catch {
    return iso; // a zone this browser does not know (the server did)
  }
}

export interface CronPreviewProps {
  /** The next ticks, and the zone they were computed in; null until known. */
  ticks: { at: string[]; timezone: string } | null;
  /** What is wrong with the expression (the server's words), or why no ticks could be read. */
  problem: { text: string; invalid: boolean } | null;
  /** The ticks are for what was typed a moment ago (a newer answer is on its way): shown dimmed. */
  stale: boolean;
  nowMs: number;
}

/**
 * The next ticks of the expression being typed into the schedule dialog (app/schedules reads
 * them from GET /api/cron, as the workers compute them) — so `0 9 * * 1-5` in Europe/Paris is
 * seen to mean 09:00 there before it is saved, and a mistake is named while typing.
 */
export function CronPreview({ ticks, problem, stale, nowMs }: CronPreviewProps) {
  const first = ticks?.at[0];
  return (
    <div className="text-xs" data-testid="cron-preview" data-stale={stale || undefined}>
      {/* Announced when the answer changes; the countdown beside it is not (it changes each second). */}
      <p aria-live="polite" className={problem?.invalid ? 'text-amber-800 dark:text-amber-300' : `text-zinc-600 dark:text-zinc-300 ${stale ? 'opacity-50' : ''}`}>
        {problem ? (
          <span data-testid={problem.invalid ? 'cron-preview-error' : 'cron-preview-unknown'}>
            {!problem.invalid && 'The next ticks cannot be read now: '}
            <UserText text={problem.text} />
          </span>
        ) : ticks ? (
          <>
            Next:{' '}
            {ticks.at.map((t, k) => (
              <span key={t} data-testid="cron-tick">
                {k > 0 && ' · '}
                {inZone(t, ticks.timezone)}
              </span>
            ))}
          </>
        ) : null}
      </p>
      {!problem && first && (
        <p className="text-zinc-500" aria-hidden="true" data-testid="cron-next-in">
          the first in {duration(Math.max(0, Date.parse(first) - nowMs))}
        </p>
      )}
    </div>
  );
}

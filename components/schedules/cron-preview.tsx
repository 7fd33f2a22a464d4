'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { cronTicksQuery } from '@/lib/api/schedules';
import { useDbNow } from '@/lib/ui/use-now';
import { duration } from '@/lib/ui/format';
import { UserText } from '../ui/user-text';

/** A tick in the schedule's own zone, named, as its cron reads (`Mon 07 Dec, 03:00 CET`). */
function inZone(iso: string, timeZone: string): string {
  try {
    return new Date(iso).toLocaleString('en-GB', { timeZone, weekday: 'short', day: '2-digit', month: 'short', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });
  } catch {
    return iso; // a zone the browser does not know: the server knew it
  }
}

/**
 * The next ticks of what is being typed into the schedule dialog, computed by the server as the
 * workers will compute them (GET /api/cron) — so `0 9 * * 1-5` in Europe/Paris is seen to mean
 * 09:00 there before it is saved, and a mistake is named while typing, not after Save.
 */
export function CronPreview({ cron, timezone, name }: { cron: string; timezone: string; name: string }) {
  // Asked a moment after typing stops, not at each key.
  const [asked, setAsked] = useState({ cron, timezone, name });
  useEffect(() => {
    const t = setTimeout(() => setAsked({ cron, timezone, name }), 300);
    return () => clearTimeout(t);
  }, [cron, timezone, name]);
  const q = useQuery({ ...cronTicksQuery(asked.cron, asked.timezone, asked.name), placeholderData: keepPreviousData });
  const now = useDbNow();
  if (!asked.cron.trim()) return null;
  return (
    <div className="text-xs" aria-live="polite" data-testid="cron-preview">
      {q.isError ? (
        <p className="text-amber-800 dark:text-amber-300" data-testid="cron-preview-error">
          <UserText text={q.error.message} />
        </p>
      ) : q.data ? (
        <p className="text-zinc-600 dark:text-zinc-300">
          Next:{' '}
          {q.data.ticks.map((t, k) => (
            <span key={t} data-testid="cron-tick">
              {k > 0 && ' · '}
              {inZone(t, asked.timezone)}
              {k === 0 && <span className="text-zinc-500"> (in {duration(Math.max(0, Date.parse(t) - now))})</span>}
            </span>
          ))}
        </p>
      ) : null}
    </div>
  );
}

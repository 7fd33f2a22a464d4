'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { CronPreview } from '@/components/schedules/cron-preview';
import { ApiError } from '@/lib/api/client';
import { cronTicksQuery } from '@/lib/api/schedules';
import { cronUsesHash } from '@/lib/queue/job';
import { useDbNow } from '@/lib/ui/use-now';

/** The schedule dialog's preview of what is being typed: asked a moment after typing stops. */
export function CronTicks({ cron, timezone, name }: { cron: string; timezone: string; name: string }) {
  // The name only matters to an H: other expressions are not asked again at each letter of it.
  const draft = { cron: cron.trim(), timezone: timezone.trim(), name: cronUsesHash(cron) ? name : '' };
  const [asked, setAsked] = useState(draft);
  useEffect(() => {
    const t = setTimeout(() => setAsked(draft), 300);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [draft.cron, draft.timezone, draft.name]);
  const needsName = cronUsesHash(asked.cron) && !asked.name;
  const q = useQuery({ ...cronTicksQuery(asked.cron, asked.timezone, asked.name), enabled: !!asked.cron && !!asked.timezone && !needsName, placeholderData: keepPreviousData });
  const nowMs = useDbNow();
  if (!draft.cron) return null;
  if (needsName) return <CronPreview ticks={null} problem={{ text: 'an H stands for a value the schedule’s name fixes: name it to see its ticks', invalid: false }} stale={false} nowMs={nowMs} />;
  const problem = q.isError ? { text: q.error.message, invalid: q.error instanceof ApiError && q.error.status === 400 } : null;
  const stale = q.isPlaceholderData || asked.cron !== draft.cron || asked.timezone !== draft.timezone || asked.name !== draft.name;
  return <CronPreview ticks={q.data ? { at: q.data.ticks, timezone: q.data.timezone } : null} problem={problem} stale={stale} nowMs={nowMs} />;
}

'use client';
import { useQuery } from '@tanstack/react-query';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useMemo, useState } from 'react';
import { GroupTable } from '@/components/dead-letter/group-table';
import { IgnoredFilters } from '@/components/jobs/ignored-filters';
import { JobFilterBar } from '@/components/jobs/job-filters';
import { Card, EmptyState, ErrorState } from '@/components/ui/states';
import { meQuery } from '@/lib/api/auth';
import { deadLetterQuery } from '@/lib/api/dead-letter';
import { roleRefusal } from '@/lib/ui/role-gate';
import { ExportLinks } from '@/components/jobs/export-links';
import { filtersFromParams, filtersToQuery, type JobFilters } from '@/lib/api/filters';
import type { DeadLetterGroupDto } from '@/lib/api/types';
import { int } from '@/lib/ui/format';
import { useRefreshInterval } from '@/lib/ui/refresh';
import { useDbNow } from '@/lib/ui/use-now';
import { useActionFlow } from '../action-flow';
import { JobsList } from '../jobs/jobs-list';
import { SavedViews } from '../saved-views';

/** The dead letter: failed jobs grouped by error fingerprint, and the failed jobs themselves (filters in the URL). */
export function DeadLetterView() {
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const interval = useRefreshInterval();
  const groups = useQuery(deadLetterQuery(interval));
  const now = useDbNow();
  const flow = useActionFlow();
  const role = useQuery(meQuery()).data?.role;
  const [pending, setPending] = useState(false);
  const filters: JobFilters = useMemo(() => ({ ...filtersFromParams(params), status: 'failed' }), [params]);
  const setFilters = (f: JobFilters) => {
    const qs = filtersToQuery({ ...f, status: undefined });
    router.push(qs ? `${pathname}?${qs}` : pathname, { scroll: false }); // Back undoes a filter
  };
  const groupFilter = (g: DeadLetterGroupDto): JobFilters => ({ status: 'failed', type: g.type, fingerprint: g.fingerprint });
  const groupLabel = (g: DeadLetterGroupDto) => `every failed ${g.type} job whose error looks like “${g.pattern}”`;
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h1 className="text-xl font-semibold">Dead letter</h1>
        <ExportLinks filters={filters} />
      </div>
      <p className="text-sm text-zinc-600 dark:text-zinc-300">
        Jobs that failed for good: their attempts ran out, or the error was permanent. Requeue a group once its cause is fixed (optionally with a fresh
        attempt budget), or delete it.
      </p>
      <Card
        title="By error"
        actions={
          groups.data && (
            <span className="text-xs text-zinc-500">
              {groups.data.complete ? groups.data.examined === 1 ? 'the one failed job' : `all ${int(groups.data.examined)} failed jobs` : `the latest ${int(groups.data.examined)} failures (group actions cover all)`}
            </span>
          )
        }
      >
        {groups.isError && !groups.data ? (
          <ErrorState title="Cannot group the dead letter" message={groups.error.message} onRetry={() => void groups.refetch()} />
        ) : !groups.data ? (
          <p className="text-zinc-500">Loading…</p>
        ) : groups.data.groups.length === 0 ? (
          <EmptyState title="The dead letter is empty">No job has failed for good. Failing jobs retry with backoff until their attempts run out.</EmptyState>
        ) : (
          <GroupTable
            groups={groups.data.groups}
            nowMs={now}
            activeFingerprint={filters.fingerprint}
            activeType={filters.type}
            onShow={(g) => setFilters(groupFilter(g))}
            onRequeue={(g) => flow.start({ action: 'requeue', target: { filter: groupFilter(g) }, label: groupLabel(g) })}
            onDelete={(g) => flow.start({ action: 'delete', target: { filter: groupFilter(g) }, label: groupLabel(g) })}
            requeueWhy={roleRefusal('requeue', role)}
            deleteWhy={roleRefusal('delete', role)}
          />
        )}
      </Card>
      <div className="flex justify-end">
        <SavedViews page="dead-letter" />
      </div>
      <JobFilterBar filters={filters} onChange={setFilters} fixedStatus="failed" onPendingChange={setPending} />
      <IgnoredFilters params={params} />
      <JobsList filters={filters} filtersPending={pending} emptyHint="No failed job matches these filters." />
      {flow.element}
    </div>
  );
}

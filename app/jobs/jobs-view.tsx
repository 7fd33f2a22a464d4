'use client';
import { useQuery } from '@tanstack/react-query';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useEffect, useMemo, useState } from 'react';
import { ExportLinks } from '@/components/jobs/export-links';
import { IgnoredFilters } from '@/components/jobs/ignored-filters';
import { JobFilterBar } from '@/components/jobs/job-filters';
import { filtersFromParams, filtersToQuery, type JobFilters } from '@/lib/api/filters';
import { consoleMetaQuery } from '@/lib/api/console';
import { statsQuery } from '@/lib/api/stats';
import { SavedViews } from '../saved-views';
import { JobsList } from './jobs-list';

/** /jobs: the filters live in the URL (shareable, and they survive a reload). */
export function JobsView() {
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const filters = useMemo(() => filtersFromParams(params), [params]);
  const stats = useQuery({ ...statsQuery(false), staleTime: 60_000 });
  const meta = useQuery(consoleMetaQuery());
  // The type suggestions only once mounted: the server's render has none, and rendered during
  // hydration they made it fail (React #418, caught by test/e2e/auth/xss.spec.ts).
  const [mounted, setMounted] = useState(false);
  const [pending, setPending] = useState(false);
  useEffect(() => setMounted(true), []);
  useEffect(() => {
    if (params.get('focus') === 'search') document.getElementById('job-search')?.focus();
  }, [params]);
  const onChange = (f: JobFilters) => {
    const qs = filtersToQuery(f);
    router.push(qs ? `${pathname}?${qs}` : pathname, { scroll: false }); // Back undoes a filter
  };
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h1 className="text-xl font-semibold">Jobs</h1>
        <div className="flex items-baseline gap-3">
          <SavedViews page="jobs" />
          <ExportLinks filters={filters} />
        </div>
      </div>
      <JobFilterBar filters={filters} onChange={onChange} queues={stats.data?.queues.map((q) => q.queue) ?? []} types={mounted ? (meta.data?.jobTypes ?? []) : []} onPendingChange={setPending} />
      <IgnoredFilters params={params} />
      <JobsList filters={filters} filtersPending={pending} />
    </div>
  );
}

'use client';
import { ignoredFilters } from '@/lib/api/filters';
import { visible } from '@/lib/ui/visible';

/** A line saying which filters of the address were left out, and so that the list is wider than the link meant. */
export function IgnoredFilters({ params }: { params: URLSearchParams | { get(name: string): string | null } }) {
  const ignored = ignoredFilters(params);
  if (!ignored.length) return null;
  return (
    <p role="alert" data-testid="ignored-filters" className="text-sm text-amber-800 dark:text-amber-300">
      Ignored {ignored.map((f) => `${f.name}=${visible(f.value)} (${f.why})`).join(', ')}: the list below is not filtered by{' '}
      {ignored.length === 1 ? 'it' : 'them'}, and neither is an action on every job matching it.
    </p>
  );
}

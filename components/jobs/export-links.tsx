import { filtersToQuery, type JobFilters } from '@/lib/api/filters';

/**
 * Download every job the list's (applied) filters match: GET /api/jobs/export, as CSV for a
 * spreadsheet or NDJSON for a script. A plain link: the browser downloads it with the
 * session's cookie, page by page as it reads (lib/server/job-export.ts).
 */
export function ExportLinks({ filters }: { filters: JobFilters }) {
  const href = (format: 'csv' | 'ndjson') => `/api/jobs/export?${filtersToQuery(filters, { format })}`;
  const link = 'text-sky-700 hover:underline dark:text-sky-400';
  return (
    <span className="text-xs text-zinc-500 dark:text-zinc-400" data-testid="export-links" title="every job matching the applied filters, in the list's order (up to 10,000; the file says so when it is cut)">
      Export:{' '}
      <a className={link} href={href('csv')} download>
        CSV
      </a>{' '}
      ·{' '}
      <a className={link} href={href('ndjson')} download>
        NDJSON
      </a>
    </span>
  );
}

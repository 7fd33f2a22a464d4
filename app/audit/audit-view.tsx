'use client';
/** /audit — every operator action (console, API, CLI), newest first; filter by who, what, or job id (query parameters). */
import { useQuery } from '@tanstack/react-query';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useState } from 'react';
import { AuditTable } from '@/components/audit/audit-table';
import { Button } from '@/components/ui/button';
import { EmptyState, ErrorState } from '@/components/ui/states';
import { auditQuery, type AuditFilters } from '@/lib/api/audit';
import { jobIdFromText } from '@/lib/api/filters';
import { AUDIT_ACTION_NAMES, AUDIT_ACTIONS, type AuditAction, isAuditAction } from '@/lib/audit/actions';
import { visible } from '@/lib/ui/visible';
import { useRefreshInterval } from '@/lib/ui/refresh';

const FIELDS = ['actor', 'action', 'jobId'] as const;
const FIELD = 'rounded border border-zinc-300 bg-white px-2 py-1 text-sm text-zinc-900 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100';

/** The known actions (lib/audit/actions.ts), grouped by what they act on: one job (no prefix), bulk, queue, schedule, user, token. */
const ACTION_GROUPS: [string, AuditAction[]][] = Object.entries(
  AUDIT_ACTION_NAMES.reduce<Record<string, AuditAction[]>>((g, a) => {
    const group = a.includes('.') ? a.split('.')[0]! : 'job';
    (g[group] ??= []).push(a);
    return g;
  }, {}),
);

export function AuditView() {
  const params = useSearchParams();
  const router = useRouter();
  const path = usePathname();
  const filters: AuditFilters = Object.fromEntries(FIELDS.map((f) => [f, params.get(f) ?? undefined]).filter(([, v]) => v));
  // The pages walked through belong to the filters they were read under: back or forward
  // to other filters starts again at the newest entries.
  const filterKey = params.toString();
  const [walked, setWalked] = useState<{ key: string; cursors: string[] }>({ key: filterKey, cursors: [] });
  const cursors = walked.key === filterKey ? walked.cursors : [];
  const setCursors = (next: string[]) => setWalked({ key: filterKey, cursors: next });
  const cursor = cursors[cursors.length - 1];
  const interval = useRefreshInterval();
  const q = useQuery(auditQuery({ ...filters, cursor }, cursor ? false : interval));
  const [jobIdError, setJobIdError] = useState<string | null>(null);
  const set = (k: (typeof FIELDS)[number], v: string | undefined) => {
    const next = new URLSearchParams(params);
    if (v) next.set(k, v);
    else next.delete(k);
    setCursors([]);
    router.push(`${path}?${next}`);
  };
  return (
    <div className="space-y-4">
      <h1 className="text-xl font-semibold">Audit log</h1>
      <form
        className="flex flex-wrap items-end gap-2 text-sm"
        onSubmit={(e) => {
          e.preventDefault();
          const fd = new FormData(e.currentTarget);
          const next = new URLSearchParams();
          for (const f of FIELDS) {
            const v = String(fd.get(f) ?? '').trim();
            if (v) next.set(f, v);
          }
          // A job id as the console shows it (#4211) is that job's; anything else is said here,
          // the log left as it was (the server would refuse it, and the log give way to the error).
          const jobId = next.get('jobId');
          const id = jobId === null ? null : jobIdFromText(jobId);
          setJobIdError(jobId !== null && !id ? 'A job id is a number, as in 4211 or #4211.' : null);
          if (jobId !== null && !id) return;
          if (id) next.set('jobId', id);
          setCursors([]);
          router.push(`${path}?${next}`);
        }}
      >
        {FIELDS.map((f) => (
          <label key={f} className="flex flex-col text-xs text-zinc-500">
            {f === 'jobId' ? 'Job id' : f === 'actor' ? 'Who' : 'Action'}
            {f === 'action' ? (
              <select name={f} defaultValue={filters.action ?? ''} key={filters.action ?? ''} className={FIELD}>
                <option value="">any action</option>
                {/* An action named in the address that this console does not list (an older or newer one's) still filters, and shows as chosen. */}
                {filters.action && !isAuditAction(filters.action) && <option value={filters.action}>{visible(filters.action)}</option>}
                {ACTION_GROUPS.map(([group, names]) => (
                  <optgroup key={group} label={group}>
                    {names.map((a) => (
                      <option key={a} value={a} title={AUDIT_ACTIONS[a]}>
                        {a}
                      </option>
                    ))}
                  </optgroup>
                ))}
              </select>
            ) : (
              <input
                name={f}
                defaultValue={filters[f] ?? ''}
                key={filters[f] ?? ''}
                maxLength={64}
                className={FIELD}
                {...(f === 'jobId' ? { inputMode: 'numeric' as const, 'aria-invalid': jobIdError ? true : undefined, 'aria-describedby': jobIdError ? 'audit-job-id-error' : undefined } : {})}
              />
            )}
          </label>
        ))}
        <Button type="submit">Filter</Button>
        {Object.keys(filters).length > 0 && (
          <Button
            variant="ghost"
            onClick={() => {
              setJobIdError(null);
              router.push(path);
            }}
          >
            Clear
          </Button>
        )}
        {jobIdError && (
          <p id="audit-job-id-error" role="alert" className="basis-full text-xs text-red-700 dark:text-red-400" data-testid="audit-job-id-error">
            {jobIdError}
          </p>
        )}
      </form>
      {q.error ? (
        <ErrorState title="Could not load the audit log" message={q.error.message} onRetry={() => void q.refetch()} />
      ) : !q.data ? (
        <p className="text-zinc-500">Loading…</p>
      ) : q.data.entries.length === 0 ? (
        Object.keys(filters).length > 0 ? (
          <EmptyState title="No entries match these filters">Who matches the start of a name, in any case; Clear shows every entry.</EmptyState>
        ) : (
          <EmptyState title="No operator actions recorded">Requeues, cancels, recovers, deletes, queue controls, users and tokens are logged here.</EmptyState>
        )
      ) : (
        <>
          <AuditTable entries={q.data.entries} onActor={(a) => set('actor', a)} onAction={(a) => set('action', a)} />
          <div className="flex gap-2">
            {cursors.length > 0 && <Button onClick={() => setCursors(cursors.slice(0, -1))}>Newer</Button>}
            {q.data.nextCursor && <Button onClick={() => setCursors([...cursors, q.data!.nextCursor!])}>Older</Button>}
          </div>
        </>
      )}
    </div>
  );
}

import { UserText } from '@/components/ui/user-text';
import type { StatsDto } from '@/lib/api/types';
import { longTransaction, xidAgeHigh } from '@/lib/ui/db-health';
import { int, shortDuration } from '@/lib/ui/format';

/**
 * The overview's warnings about the database under the queue: a transaction left open that
 * keeps vacuum from clearing finished jobs, and transaction ids close to wraparound. Nothing
 * when all is well. The session's application and user are someone else's text: escaped.
 */
export function DatabaseHealth({ database, snapshotAgeMs }: { database: StatsDto['database']; snapshotAgeMs: number }) {
  const t = longTransaction(database, snapshotAgeMs);
  const xid = xidAgeHigh(database);
  if (!t && !xid) return null;
  return (
    <>
      {t && (
        <p className="text-sm text-amber-800 dark:text-amber-300" role="alert" data-testid="long-transaction">
          A transaction has been open for {shortDuration(t.ageMs)} in this database (pid {t.pid}
          {t.state && (
            <>
              , <UserText text={t.state} />
            </>
          )}
          {t.application && (
            <>
              , application <UserText text={t.application} />
            </>
          )}
          {t.user && (
            <>
              , user <UserText text={t.user} />
            </>
          )}
          ): while it lasts, vacuum cannot clear the jobs finished since it began
          {database.deadRows !== null && <> ({int(database.deadRows)} dead rows in jobs now)</>}, and claims and counts slow down as they
          pile up. Unless it is a backup or a migration, end it: <code className="text-xs">SELECT pg_terminate_backend({t.pid})</code>.
        </p>
      )}
      {xid && (
        <p className="text-sm text-red-700 dark:text-red-300" role="alert" data-testid="xid-age">
          This database&apos;s oldest unfrozen transaction id is {int(database.xidAge!)} transactions old: PostgreSQL stops accepting
          writes near 2.1 billion. Vacuum freezes them; see that autovacuum runs (a long transaction, an abandoned replication slot or a
          forgotten prepared transaction stops it).
        </p>
      )}
    </>
  );
}

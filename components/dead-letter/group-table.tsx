import type { DeadLetterGroupDto } from '@/lib/api/types';
import { ago, int, ms } from '@/lib/ui/format';
import { visible } from '@/lib/ui/visible';
import { ActionButton } from '../actions/action-button';
import { Button } from '../ui/button';
import { UserText } from '../ui/user-text';
import { ScrollFrame } from '../ui/scroll-frame';

export interface GroupTableProps {
  groups: DeadLetterGroupDto[];
  nowMs: number;
  activeFingerprint?: string;
  /** The type shown with it: a group is a type and a fingerprint (the same error shape may fail several types). */
  activeType?: string;
  onShow(g: DeadLetterGroupDto): void;
  onRequeue(g: DeadLetterGroupDto): void;
  onDelete(g: DeadLetterGroupDto): void;
  /** Why the signed-in role may not requeue or delete (the buttons stay, disabled, saying so). */
  requeueWhy?: string | null;
  deleteWhy?: string | null;
}

/**
 * Failed jobs grouped by type and error fingerprint, largest group first. Below `md` each
 * group is a stacked block (count and type, the error, where and when, then its actions):
 * as a table a phone showed the count, the type and half the error, and the actions lay a
 * sideways scroll away.
 */
export function GroupTable({ groups, nowMs, activeFingerprint, activeType, onShow, onRequeue, onDelete, requeueWhy, deleteWhy }: GroupTableProps) {
  return (
    <ScrollFrame>
      <table className="block w-full text-sm md:table" data-testid="dead-letter-groups">
        <thead className="hidden text-left text-xs uppercase tracking-wide text-zinc-500 md:table-header-group">
          <tr>
            <th className="py-1 pr-3">Jobs</th>
            <th className="py-1 pr-3">Type</th>
            <th className="py-1 pr-3">Error (variable parts as # and ?)</th>
            <th className="py-1 pr-3">Queues</th>
            <th className="py-1 pr-3">Last failure</th>
            <th className="py-1" />
          </tr>
        </thead>
        <tbody className="block md:table-row-group">
          {groups.map((g) => (
            <tr
              key={`${g.type}|${g.fingerprint}`}
              className={`block border-t border-zinc-100 py-2 align-top md:table-row md:py-0 dark:border-zinc-800 ${activeFingerprint === g.fingerprint && (!activeType || activeType === g.type) ? 'bg-sky-50 dark:bg-sky-950/40' : ''}`}
              data-testid={`group-${g.fingerprint}`}
            >
              <td className="tabular inline pr-2 font-semibold md:table-cell md:py-2 md:pr-3">
                {int(g.count)}
                <span className="font-normal text-zinc-500 md:hidden"> {g.count === 1 ? 'job' : 'jobs'}</span>
              </td>
              <td className="inline break-all font-mono text-xs md:table-cell md:min-w-[9rem] md:py-2 md:pr-3">
                <UserText text={g.type} />
              </td>
              <td className="block pt-1 md:table-cell md:min-w-[14rem] md:py-2 md:pr-3">
                <p className="wrap-anywhere font-mono text-xs">{g.pattern ? <UserText text={g.pattern} multiline /> : '(no error text)'}</p>
                {g.sampleError && (
                  <p className="mt-0.5 line-clamp-3 wrap-anywhere text-xs text-zinc-500" title="the error of the group's latest failure">
                    e.g. <UserText text={g.sampleError} multiline />
                  </p>
                )}
              </td>
              <td className="inline break-all text-xs md:table-cell md:min-w-[7rem] md:py-2 md:pr-3">
                <span className="text-zinc-500 md:hidden">on </span>
                {g.queues.map((q, k) => (
                  <span key={q}>
                    {k > 0 && ', '}
                    <UserText text={q} />
                  </span>
                ))}
              </td>
              <td className="inline whitespace-nowrap text-xs text-zinc-500 md:table-cell md:py-2 md:pr-3">
                <span className="md:hidden"> · last failed </span>
                {g.newestFailedAt ? ago(nowMs - ms(g.newestFailedAt)!) : '—'}
              </td>
              <td className="block pt-1.5 md:table-cell md:py-2">
                <div className="flex flex-wrap gap-1 md:justify-end">
                  <Button size="sm" variant="ghost" onClick={() => onShow(g)}>
                    Show jobs
                  </Button>
                  <ActionButton size="sm" onClick={() => onRequeue(g)} aria-label={`Requeue group ${visible(g.type)} ${g.fingerprint}`} why={requeueWhy}>
                    Requeue group
                  </ActionButton>
                  <ActionButton size="sm" variant="dangerOutline" onClick={() => onDelete(g)} aria-label={`Delete group ${visible(g.type)} ${g.fingerprint}`} why={deleteWhy}>
                    Delete group
                  </ActionButton>
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollFrame>
  );
}

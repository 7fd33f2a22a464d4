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

/** Failed jobs grouped by type and error fingerprint, largest group first. */
export function GroupTable({ groups, nowMs, activeFingerprint, activeType, onShow, onRequeue, onDelete, requeueWhy, deleteWhy }: GroupTableProps) {
  return (
    <ScrollFrame>
      <table className="w-full text-sm" data-testid="dead-letter-groups">
        <thead className="text-left text-xs uppercase tracking-wide text-zinc-500">
          <tr>
            <th className="py-1 pr-3">Jobs</th>
            <th className="py-1 pr-3">Type</th>
            <th className="py-1 pr-3">Error (variable parts as # and ?)</th>
            <th className="py-1 pr-3">Queues</th>
            <th className="py-1 pr-3">Last failure</th>
            <th className="py-1" />
          </tr>
        </thead>
        <tbody>
          {groups.map((g) => (
            <tr
              key={`${g.type}|${g.fingerprint}`}
              className={`border-t border-zinc-100 align-top dark:border-zinc-800 ${activeFingerprint === g.fingerprint && (!activeType || activeType === g.type) ? 'bg-sky-50 dark:bg-sky-950/40' : ''}`}
              data-testid={`group-${g.fingerprint}`}
            >
              <td className="tabular py-2 pr-3 font-semibold">{int(g.count)}</td>
              <td className="min-w-[9rem] break-all py-2 pr-3 font-mono text-xs">
                <UserText text={g.type} />
              </td>
              <td className="min-w-[14rem] py-2 pr-3">
                <p className="wrap-anywhere font-mono text-xs">{g.pattern ? <UserText text={g.pattern} multiline /> : '(no error text)'}</p>
                {g.sampleError && (
                  <p className="mt-0.5 line-clamp-3 wrap-anywhere text-xs text-zinc-500" title="the error of the group's latest failure">
                    e.g. <UserText text={g.sampleError} multiline />
                  </p>
                )}
              </td>
              <td className="min-w-[7rem] break-all py-2 pr-3 text-xs">
                {g.queues.map((q, k) => (
                  <span key={q}>
                    {k > 0 && ', '}
                    <UserText text={q} />
                  </span>
                ))}
              </td>
              <td className="whitespace-nowrap py-2 pr-3 text-xs text-zinc-500">{g.newestFailedAt ? ago(nowMs - ms(g.newestFailedAt)!) : '—'}</td>
              <td className="py-2">
                <div className="flex flex-wrap justify-end gap-1">
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

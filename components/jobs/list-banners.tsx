import { int } from '@/lib/ui/format';
import { ActionButton } from '../actions/action-button';
import { Button } from '../ui/button';
import { UserText } from '../ui/user-text';

/** "N new jobs": new rows are announced, never pushed in under the cursor. */
export function NewRowsBanner({ count, capped, onShow }: { count: number; capped: boolean; onShow(): void }) {
  if (count <= 0) return null;
  return (
    <div className="flex items-center justify-between rounded-md border border-sky-200 bg-sky-50 px-3 py-2 text-sm text-sky-900 dark:border-sky-900 dark:bg-sky-950 dark:text-sky-200" role="status" data-testid="new-rows">
      <span>
        {int(count)}
        {capped ? '+' : ''} new {count === 1 ? 'job matches' : 'jobs match'} this view
      </span>
      <Button size="sm" onClick={onShow}>
        Show {capped ? 'newest' : int(count)}
      </Button>
    </div>
  );
}

export interface SelectionBarProps {
  selectedCount: number;
  /** Every job matching the filter is the target. */
  allMatching: boolean;
  /** Offer "all matching" (there is a filter and more than this page). */
  canSelectAllMatching: boolean;
  filterText: string;
  /** The filter bar holds changes not applied: "every job matching" would mean the old filter. */
  filtersPending?: boolean;
  onSelectAllMatching(): void;
  onClear(): void;
  onAction(action: 'requeue' | 'cancel' | 'delete' | 'recover'): void;
  /** Why the signed-in role may not run an action (the button stays, disabled, saying so). */
  refusals?: Partial<Record<'requeue' | 'cancel' | 'delete' | 'recover', string | null>>;
}

/** What is selected, and the actions on it. */
export function SelectionBar(p: SelectionBarProps) {
  const any = p.selectedCount > 0 || p.allMatching;
  // Every job matching the applied filter, while the bar shows another: apply or clear first.
  const stale = p.allMatching && !!p.filtersPending;
  return (
    <div className="flex flex-wrap items-center gap-2 rounded-md border border-zinc-200 bg-white px-3 py-2 text-sm dark:border-zinc-800 dark:bg-zinc-900" data-testid="selection-bar">
      <span className="mr-2 text-zinc-600 dark:text-zinc-300" data-testid="selection-text">
        {p.allMatching ? (
          <>
            Every job matching <strong className="break-all">
              <UserText text={p.filterText} />
            </strong>
          </>
        ) : p.selectedCount ? (
          `${int(p.selectedCount)} selected`
        ) : (
          'Select jobs to act on them (shift-click selects a range)'
        )}
      </span>
      {!p.allMatching && p.canSelectAllMatching && p.selectedCount > 0 && (
        <button
          type="button"
          className="text-sky-700 underline disabled:cursor-not-allowed disabled:text-zinc-400 disabled:no-underline dark:text-sky-400"
          onClick={p.onSelectAllMatching}
          disabled={p.filtersPending}
          title={p.filtersPending ? 'apply the filter changes first' : undefined}
        >
          Select every job matching this filter
        </button>
      )}
      {any && (
        <>
          {(['requeue', 'cancel', 'recover', 'delete'] as const).map((a) => (
            <ActionButton
              key={a}
              size="sm"
              variant={a === 'delete' ? 'danger' : undefined}
              onClick={() => p.onAction(a)}
              why={p.refusals?.[a] ?? (stale ? 'the filter bar holds changes not applied: apply or clear them first' : null)}
            >
              {a[0]!.toUpperCase() + a.slice(1)}
            </ActionButton>
          ))}
          <Button size="sm" variant="ghost" onClick={p.onClear}>
            Clear selection
          </Button>
        </>
      )}
    </div>
  );
}

'use client';
import type { SavedViewDto } from '@/lib/api/types';
import { Button } from '../ui/button';
import { Dialog } from '../ui/dialog';
import { UserText } from '../ui/user-text';

/** Confirms deleting a saved view: it goes for everyone, not only from this user's menu. */
export function DeleteViewDialog({
  view,
  pending,
  error,
  onConfirm,
  onClose,
}: {
  view: SavedViewDto;
  pending: boolean;
  error?: string | null;
  onConfirm(): void;
  onClose(): void;
}) {
  return (
    <Dialog title="Delete view" onClose={onClose}>
      <div className="space-y-4 text-sm" data-testid="delete-view-dialog">
        <p className="text-zinc-600 dark:text-zinc-300">
          Delete the view <strong className="wrap-anywhere"><UserText text={view.name} /></strong>
          {view.createdBy ? (
            <>
              {' '}saved by <UserText text={view.createdBy} />
            </>
          ) : null}
          ? It goes from everyone&apos;s Views menu; the jobs it shows are not touched.
        </p>
        {error && (
          <p role="alert" className="rounded border border-red-300 bg-red-50 p-2 text-red-800 dark:border-red-900 dark:bg-red-950 dark:text-red-200">
            <UserText text={error} />
          </p>
        )}
        <div className="flex items-center justify-end gap-2 border-t border-zinc-200 pt-3 dark:border-zinc-800">
          <Button variant="ghost" onClick={onClose}>
            Back
          </Button>
          <Button variant="danger" disabled={pending} onClick={onConfirm}>
            {pending ? 'Delete view…' : 'Delete view'}
          </Button>
        </div>
      </div>
    </Dialog>
  );
}

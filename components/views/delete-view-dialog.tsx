'use client';
import type { SavedViewDto } from '@/lib/api/types';
import { Button } from '../ui/button';
import { Dialog, DialogError, DialogFooter } from '../ui/dialog';
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
        <DialogError error={error} />
        <DialogFooter>
          <Button variant="ghost" onClick={onClose}>
            Back
          </Button>
          <Button variant="danger" disabled={pending} onClick={onConfirm}>
            {pending ? 'Delete view…' : 'Delete view'}
          </Button>
        </DialogFooter>
      </div>
    </Dialog>
  );
}

'use client';
import type { SavedViewDto } from '@/lib/api/types';
import { ConfirmDialog } from '../actions/confirm-dialog';
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
  onConfirm(reason: string | undefined): void;
  onClose(): void;
}) {
  return (
    <ConfirmDialog title="Delete view" confirmLabel="Delete view" tone="danger" testId="delete-view-dialog" pending={pending} error={error} onConfirm={onConfirm} onClose={onClose}>
      <p>
        Delete the view <strong className="wrap-anywhere"><UserText text={view.name} /></strong>
        {view.createdBy ? (
          <>
            {' '}saved by <UserText text={view.createdBy} />
          </>
        ) : null}
        ? It goes from everyone&apos;s Views menu; the jobs it shows are not touched.
      </p>
    </ConfirmDialog>
  );
}

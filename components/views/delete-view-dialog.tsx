'use client';
import { useState } from 'react';
import type { SavedViewDto } from '@/lib/api/types';
import { ReasonField } from '../actions/reason-field';
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
  onConfirm(reason: string | undefined): void;
  onClose(): void;
}) {
  const [reason, setReason] = useState('');
  return (
    <Dialog title="Delete view" onClose={onClose}>
      <form
        className="space-y-4 text-sm"
        data-testid="delete-view-dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (!pending) onConfirm(reason.trim() || undefined);
        }}
      >
        <p className="text-zinc-600 dark:text-zinc-300">
          Delete the view <strong className="wrap-anywhere"><UserText text={view.name} /></strong>
          {view.createdBy ? (
            <>
              {' '}saved by <UserText text={view.createdBy} />
            </>
          ) : null}
          ? It goes from everyone&apos;s Views menu; the jobs it shows are not touched.
        </p>
        <ReasonField value={reason} onChange={setReason} />
        <DialogError error={error} />
        <DialogFooter>
          <Button variant="ghost" onClick={onClose}>
            Back
          </Button>
          <Button type="submit" variant="danger" disabled={pending}>
            {pending ? 'Delete view…' : 'Delete view'}
          </Button>
        </DialogFooter>
      </form>
    </Dialog>
  );
}

'use client';
import { type ReactNode, useState } from 'react';
import { Button } from '../ui/button';
import { Dialog, DialogError, DialogFooter } from '../ui/dialog';
import { ReasonField } from './reason-field';

/**
 * Confirm one operator action on one thing (a schedule's Run now or Pause, an admin's change to
 * a user or token, a saved view's delete), with an optional reason for the audit log — the
 * action dialog's confirm step without its per-job preview, which such an action has none of.
 * After it is done, `done` is shown in its place (what it made, with a link) until the
 * operator closes it.
 */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  pending,
  error,
  done,
  tone = 'primary',
  cancelLabel = 'Back',
  testId = 'confirm-dialog',
  onConfirm,
  onClose,
}: {
  title: string;
  /** What the action will do, in words. */
  children: ReactNode;
  confirmLabel: string;
  pending: boolean;
  error?: string | null;
  done?: ReactNode;
  /** A confirm that takes something away is red (`danger`). */
  tone?: 'primary' | 'danger';
  cancelLabel?: string;
  testId?: string;
  onConfirm(reason: string | undefined): void;
  onClose(): void;
}) {
  const [reason, setReason] = useState('');
  return (
    <Dialog title={title} onClose={onClose} keepOnBackdrop>
      <form
        className="space-y-4 text-sm"
        data-testid={testId}
        onSubmit={(e) => {
          e.preventDefault();
          if (!pending && !done) onConfirm(reason.trim() || undefined);
        }}
      >
        <div className="text-zinc-600 dark:text-zinc-300">{children}</div>
        {!done && (
          <ReasonField value={reason} onChange={setReason} autoFocus />
        )}
        <DialogError error={error} />
        {done && (
          <div role="status" data-testid="confirm-done">
            {done}
          </div>
        )}
        <DialogFooter>
          <Button variant="ghost" onClick={onClose}>
            {done ? 'Close' : cancelLabel}
          </Button>
          {!done && (
            // Disabled while the request runs: a second click cannot send a second request
            // (the server would answer it with the same job anyway).
            <Button type="submit" variant={tone} disabled={pending} data-testid="confirm-action">
              {pending ? `${confirmLabel}…` : confirmLabel}
            </Button>
          )}
        </DialogFooter>
      </form>
    </Dialog>
  );
}

'use client';
import { useState } from 'react';
import { MAX_VIEW_NAME } from '@/lib/views/pages';
import { Button } from '../ui/button';
import { Dialog, DialogError, DialogFooter } from '../ui/dialog';
import { UserText } from '../ui/user-text';
import { fieldClass, labelClass } from '../ui/form';

/** Asks the name under which the page's applied filters are saved, for everyone. */
export function SaveViewDialog({
  page,
  conditions,
  pending,
  error,
  onSave,
  onClose,
}: {
  /** The page, as its path (/jobs). */
  page: string;
  /** The applied filters in words ("status = failed"); none: the whole list. */
  conditions: string[];
  pending: boolean;
  error?: string | null;
  onSave(name: string): void;
  onClose(): void;
}) {
  const [name, setName] = useState('');
  const trimmed = name.trim();
  return (
    <Dialog title="Save current filters" onClose={onClose} keepOnBackdrop>
      <form
        className="space-y-4 text-sm"
        data-testid="save-view-dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (trimmed && !pending) onSave(trimmed);
        }}
      >
        <div className="text-zinc-600 dark:text-zinc-300">
          Everyone who signs in will find these filters of <span className="font-mono">{page}</span> under Views:
          {conditions.length ? (
            <ul className="mt-1 list-disc pl-5" data-testid="view-conditions">
              {conditions.map((c) => (
                <li key={c} className="wrap-anywhere">
                  <UserText text={c} />
                </li>
              ))}
            </ul>
          ) : (
            <p className="mt-1">no filter: the whole list.</p>
          )}
        </div>
        <label className={labelClass}>
          Name
          <input
            className={fieldClass}
            value={name}
            onChange={(e) => setName(e.target.value)}
            maxLength={MAX_VIEW_NAME}
            placeholder="e.g. Failed payments, last 24h"
            data-autofocus
            required
          />
        </label>
        <DialogError error={error} />
        <DialogFooter>
          <Button variant="ghost" onClick={onClose}>
            Back
          </Button>
          <Button type="submit" variant="primary" disabled={pending || !trimmed}>
            {pending ? 'Save view…' : 'Save view'}
          </Button>
        </DialogFooter>
      </form>
    </Dialog>
  );
}

'use client';
import { useState } from 'react';
import { ReasonField } from '../actions/reason-field';
import { PrioritySelect } from './priority-select';
import { Button } from '../ui/button';
import { Dialog, DialogError, DialogFooter } from '../ui/dialog';
import { fieldClass, labelClass } from '../ui/form';

export interface RescheduleRequest {
  runAt?: string;
  priority?: number;
  reason?: string;
}

/** A moment as a datetime-local input shows it: the browser's time zone, to the minute. */
export const toLocalInput = (iso: string) => {
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

/**
 * Move a waiting job (POST /api/jobs/:id/reschedule): when it is due, in the browser's time
 * zone (a time already past: due now), and its priority. Sends only what changed; the server
 * re-checks that the job still waits (a claim may have taken it meanwhile: then it says so).
 */
export function RescheduleDialog({
  job,
  pending,
  error,
  onReschedule,
  onEdit,
  onClose,
}: {
  job: { id: string; runAt: string; priority: number };
  pending: boolean;
  error?: string | null;
  onReschedule(request: RescheduleRequest): void;
  onEdit?(): void;
  onClose(): void;
}) {
  // The job as it was when the dialog opened: the page refreshes it meanwhile, and a field the
  // operator left alone must not be sent because the job moved under it (a retry's backoff).
  const [opened] = useState(() => ({ due: toLocalInput(job.runAt), priority: job.priority }));
  const [due, setDue] = useState(opened.due);
  const [priority, setPriority] = useState(opened.priority);
  const [reason, setReason] = useState('');
  const changed = due !== opened.due || priority !== opened.priority;
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return (
    <Dialog title={`Reschedule job #${job.id}`} onClose={onClose}>
      <form
        className="space-y-4 text-sm"
        data-testid="reschedule-dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (pending || !changed || !due) return;
          onReschedule({
            runAt: due !== opened.due ? new Date(due).toISOString() : undefined,
            priority: priority !== opened.priority ? priority : undefined,
            reason: reason.trim() || undefined,
          });
        }}
      >
        <p className="text-zinc-600 dark:text-zinc-300">
          It keeps its attempts and checkpoints. A time already past makes it due now, as Requeue does.
        </p>
        <label className={labelClass}>
          Due ({zone})
          <input
            type="datetime-local"
            className={`w-fit ${fieldClass}`}
            value={due}
            onChange={(e) => {
              setDue(e.target.value);
              onEdit?.();
            }}
            aria-label="Due"
            required
            data-autofocus
          />
        </label>
        <PrioritySelect
          value={priority}
          onChange={(p) => {
            setPriority(p);
            onEdit?.();
          }}
          current={opened.priority}
          currentMark=" (now)"
        />
        <ReasonField value={reason} onChange={setReason} />
        <DialogError error={error} />
        <DialogFooter>
          <Button variant="ghost" onClick={onClose}>
            Back
          </Button>
          <Button type="submit" variant="primary" disabled={pending || !changed || !due}>
            {pending ? 'Reschedule…' : 'Reschedule'}
          </Button>
        </DialogFooter>
      </form>
    </Dialog>
  );
}

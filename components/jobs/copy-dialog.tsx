'use client';
import Link from 'next/link';
import { useState } from 'react';
import { ReasonField } from '../actions/reason-field';
import { PrioritySelect } from './priority-select';
import { Button } from '../ui/button';
import { Dialog, DialogError, DialogFooter } from '../ui/dialog';
import { UserText } from '../ui/user-text';
import { fieldClass, labelClass } from '../ui/form';

export interface CopyRequest {
  payload?: unknown;
  queue?: string;
  priority?: number;
  reason?: string;
}

/**
 * Enqueue a copy of a job: its type, with the payload as stored (`stored`: undefined while it
 * loads) to mend, say, a dead job's bad input, its queue and its priority, all editable. Sends only what
 * changed (`onCopy`); the server checks the copy as any enqueue (POST /api/jobs/:id/copy),
 * leaves the original as it is, and the audit log links the two. `made`: the copy's id.
 */
export function CopyJobDialog({
  job,
  stored,
  storedError,
  pending,
  error,
  made,
  onCopy,
  onEdit,
  onClose,
}: {
  job: { id: string; type: string; queue: string; priority: number };
  stored: string | undefined;
  storedError?: string | null;
  pending: boolean;
  error?: string | null;
  made?: string | null;
  onCopy(request: CopyRequest): void;
  /** The operator changed what they send: the last answer's error no longer applies. */
  onEdit?(): void;
  onClose(): void;
}) {
  const [edited, setEdited] = useState<string | null>(null);
  const [queue, setQueue] = useState(job.queue);
  const [priority, setPriority] = useState(job.priority);
  const [reason, setReason] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const text = edited ?? stored ?? '';
  const submit = () => {
    let payload: unknown;
    if (edited !== null && edited !== stored) {
      try {
        payload = JSON.parse(edited);
      } catch (e) {
        setInvalid(`The payload is not valid JSON: ${(e as Error).message}`);
        return;
      }
    }
    setInvalid(null);
    onCopy({
      payload,
      queue: queue !== job.queue ? queue : undefined,
      priority: priority !== job.priority ? priority : undefined,
      reason: reason.trim() || undefined,
    });
  };
  return (
    <Dialog title={`Enqueue a copy of job #${job.id}`} onClose={onClose} keepOnBackdrop wide>
      {made ? (
        <div className="space-y-4 text-sm" data-testid="copy-made">
          <p role="status">
            Enqueued job{' '}
            <Link href={`/jobs/${made}`} className="font-mono underline">
              #{made}
            </Link>
            , a copy of #{job.id} (which is left as it was).
          </p>
          <DialogFooter>
            <Button variant="primary" onClick={onClose}>
              Close
            </Button>
          </DialogFooter>
        </div>
      ) : (
        <form
          className="space-y-4 text-sm"
          data-testid="copy-dialog"
          onSubmit={(e) => {
            e.preventDefault();
            if (!pending && stored !== undefined) submit();
          }}
        >
          <p className="text-zinc-600 dark:text-zinc-300">
            A new job of type{' '}
            <span className="font-mono">
              <UserText text={job.type} />
            </span>
            , due now, checked as any enqueue is (its type&apos;s payload schema included). This job stays as it is, its history whole.
          </p>
          <label className={labelClass}>
            Payload (JSON)
            <textarea
              className="min-h-40 rounded-md border border-zinc-300 bg-white p-2 font-mono text-xs text-zinc-900 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100"
              value={text}
              onChange={(e) => {
                setEdited(e.target.value);
                setInvalid(null);
                onEdit?.();
              }}
              disabled={stored === undefined}
              spellCheck={false}
              aria-label="Payload"
              data-autofocus
            />
          </label>
          <label className={labelClass}>
            Queue
            <input
              className={fieldClass}
              value={queue}
              onChange={(e) => {
                setQueue(e.target.value);
                onEdit?.();
              }}
              aria-label="Queue"
              required
            />
          </label>
          <PrioritySelect
            value={priority}
            onChange={(p) => {
              setPriority(p);
              onEdit?.();
            }}
            current={job.priority}
            currentMark=" (as the original)"
          />
          <ReasonField value={reason} onChange={setReason} />
          <DialogError error={invalid ?? (storedError ? `The payload could not be read: ${storedError}` : error)} />
          <DialogFooter>
            <Button variant="ghost" onClick={onClose}>
              Back
            </Button>
            <Button type="submit" variant="primary" disabled={pending || stored === undefined || !queue}>
              {pending ? 'Enqueue copy…' : 'Enqueue copy'}
            </Button>
          </DialogFooter>
        </form>
      )}
    </Dialog>
  );
}

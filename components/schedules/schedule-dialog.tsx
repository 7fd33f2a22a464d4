'use client';
import { type ReactNode, useState } from 'react';
import { DEFAULT_PRIORITY } from '@/lib/api/priority';
import type { ScheduleDefinition } from '@/lib/api/schedules';
import type { ScheduleDto } from '@/lib/api/types';
import { visible } from '@/lib/ui/visible';
import { ReasonField } from '../actions/reason-field';
import { PrioritySelect } from '../jobs/priority-select';
import { Button } from '../ui/button';
import { Dialog, DialogError, DialogFooter } from '../ui/dialog';
import { fieldClass, labelClass } from '../ui/form';

/**
 * Define a recurring job, or redefine one (`editing`: its name is then fixed). The server
 * checks everything as `leasehold schedule add` does (the cron, the zone, the type and its
 * payload schema) and says what is wrong; a paused schedule stays paused, and an unchanged cron
 * keeps its next tick. `knownTypes`: the type field's suggestions; `knownQueues` the queue
 * field's, and `consumers(queue)` how many live workers consume a queue (null: not known),
 * so that a queue nobody takes from (a typo) is said before its jobs pile up.
 */
export function ScheduleDialog({
  editing,
  knownTypes,
  knownQueues = [],
  consumers = () => null,
  pending,
  error,
  onSave,
  onEdit,
  onClose,
  preview,
}: {
  editing: ScheduleDto | null;
  knownTypes: readonly string[];
  knownQueues?: readonly string[];
  consumers?(queue: string): number | null;
  pending: boolean;
  error?: string | null;
  onSave(name: string, definition: ScheduleDefinition): void;
  /** The operator changed what they send: the last answer's error no longer applies. */
  onEdit?(): void;
  onClose(): void;
  /** What the cron being typed means (its next ticks), read by the page: components do not fetch. */
  preview?(draft: { cron: string; timezone: string; name: string }): ReactNode;
}) {
  const [name, setName] = useState(editing?.name ?? '');
  const [cron, setCron] = useState(editing?.cron ?? '');
  const [timezone, setTimezone] = useState(editing?.timezone ?? 'UTC');
  const [type, setType] = useState(editing?.type ?? '');
  const [queue, setQueue] = useState(editing?.queue ?? 'default');
  const [payload, setPayload] = useState(editing ? JSON.stringify(editing.payload ?? {}, null, 2) : '{}');
  const [priority, setPriority] = useState(editing?.priority ?? DEFAULT_PRIORITY);
  const [maxAttempts, setMaxAttempts] = useState(editing ? String(editing.maxAttempts) : '');
  const [overlap, setOverlap] = useState<ScheduleDto['overlap']>(editing?.overlap ?? 'allow');
  const [reason, setReason] = useState('');
  // The zones this browser knows, as suggestions (the server checks the name), and its own:
  // the default stays UTC, what a server's schedule is usually written in.
  const [{ zones, mine }] = useState(() => ({ zones: Intl.supportedValuesOf?.('timeZone') ?? [], mine: Intl.DateTimeFormat().resolvedOptions().timeZone as string | undefined }));
  const [invalid, setInvalid] = useState<string | null>(null);
  const edit = <T,>(set: (v: T) => void) => (v: T) => {
    set(v);
    setInvalid(null);
    onEdit?.();
  };
  const submit = () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload);
    } catch (e) {
      setInvalid(`The payload is not valid JSON: ${(e as Error).message}`);
      return;
    }
    const attempts = maxAttempts.trim() === '' ? undefined : Number(maxAttempts);
    if (attempts !== undefined && !(Number.isInteger(attempts) && attempts >= 1 && attempts <= 100)) {
      setInvalid('Attempts must be a whole number from 1 to 100, or left empty for the type’s.');
      return;
    }
    onSave(name, { cron, timezone, type, queue, payload: parsed, priority, maxAttempts: attempts, overlap, reason: reason.trim() || undefined });
  };
  return (
    <Dialog title={editing ? `Edit schedule ${visible(editing.name)}` : 'New schedule'} onClose={onClose} keepOnBackdrop wide>
      <form
        className="space-y-4 text-sm"
        data-testid="schedule-dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (!pending) submit();
        }}
      >
        <p className="text-zinc-600 dark:text-zinc-300">
          Each tick enqueues one job, exactly once across every worker. A schedule a handlers module defines is defined again at
          each worker start: change it there.
        </p>
        {!editing && (
          <label className={labelClass}>
            Name
            <input className={fieldClass} value={name} onChange={(e) => edit(setName)(e.target.value)} aria-label="Name" required maxLength={200} data-autofocus />
          </label>
        )}
        <div className="flex flex-wrap gap-3">
          <label className={labelClass}>
            Cron (five fields, or six with seconds first)
            <input className={`${fieldClass} font-mono`} value={cron} onChange={(e) => edit(setCron)(e.target.value)} aria-label="Cron" placeholder="0 3 * * *" required maxLength={200} />
          </label>
          <label className={labelClass}>
            Time zone
            <input className={fieldClass} value={timezone} onChange={(e) => edit(setTimezone)(e.target.value)} aria-label="Time zone" list="schedule-zones" required maxLength={64} />
            <datalist id="schedule-zones">
              {zones.map((z) => (
                <option key={z} value={z} />
              ))}
            </datalist>
          </label>
          {mine && mine !== timezone && (
            <Button variant="ghost" className="self-end" onClick={() => edit(setTimezone)(mine)}>
              Use mine ({mine})
            </Button>
          )}
        </div>
        {preview?.({ cron, timezone, name: editing?.name ?? name })}
        <div className="flex flex-wrap gap-3">
          <label className={labelClass}>
            Job type
            <input className={`${fieldClass} font-mono`} value={type} onChange={(e) => edit(setType)(e.target.value)} aria-label="Job type" list="schedule-types" required maxLength={200} />
            <datalist id="schedule-types">
              {knownTypes.map((t) => (
                <option key={t} value={t} />
              ))}
            </datalist>
          </label>
          <label className={labelClass}>
            Queue
            <input className={fieldClass} value={queue} onChange={(e) => edit(setQueue)(e.target.value)} aria-label="Queue" list="schedule-queues" required maxLength={200} />
            <datalist id="schedule-queues">
              {knownQueues.map((q) => (
                <option key={q} value={q} />
              ))}
            </datalist>
          </label>
        </div>
        {queue.trim() !== '' && consumers(queue) === 0 && (
          <p className="text-xs text-amber-700 dark:text-amber-300" data-testid="schedule-queue-unserved">
            No live worker consumes queue “{visible(queue)}”: its ticks’ jobs will wait until a worker starts with it in --queues.
          </p>
        )}
        <label className={labelClass}>
          Payload (JSON)
          <textarea className={`${fieldClass} min-h-24 font-mono text-xs`} value={payload} onChange={(e) => edit(setPayload)(e.target.value)} aria-label="Payload" spellCheck={false} />
        </label>
        <div className="flex flex-wrap gap-3">
          <PrioritySelect value={priority} onChange={edit(setPriority)} />
          <label className={labelClass}>
            Attempts per run
            <input className={`${fieldClass} w-28`} value={maxAttempts} onChange={(e) => edit(setMaxAttempts)(e.target.value)} aria-label="Attempts per run" inputMode="numeric" placeholder="the type’s" />
          </label>
          <label className={labelClass}>
            While a run is unfinished
            <select className={fieldClass} value={overlap} onChange={(e) => edit(setOverlap)(e.target.value as ScheduleDto['overlap'])} aria-label="While a run is unfinished">
              <option value="allow">tick anyway (runs may overlap)</option>
              <option value="skip">skip the tick (one run at a time)</option>
            </select>
          </label>
        </div>
        <ReasonField value={reason} onChange={setReason} />
        <DialogError error={invalid ?? error} />
        <DialogFooter>
          <Button variant="ghost" onClick={onClose}>
            Back
          </Button>
          <Button type="submit" variant="primary" disabled={pending || !name || !cron || !type}>
            {editing ? (pending ? 'Save…' : 'Save') : pending ? 'Add schedule…' : 'Add schedule'}
          </Button>
        </DialogFooter>
      </form>
    </Dialog>
  );
}

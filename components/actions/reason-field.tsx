/** The operator's reason for an action, kept in the audit log: the action dialog's and the confirm dialog's one field. */
export function ReasonField({ value, onChange, autoFocus }: { value: string; onChange(reason: string): void; autoFocus?: boolean }) {
  return (
    <label className="flex flex-col gap-1 text-xs text-zinc-500">
      Reason (optional, kept in the audit log)
      <input
        className="rounded border border-zinc-300 bg-white px-2 py-1 text-sm text-zinc-900 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100"
        value={value}
        maxLength={500}
        onChange={(e) => onChange(e.target.value)}
        aria-label="Reason"
        data-testid="action-reason"
        data-autofocus={autoFocus || undefined}
      />
    </label>
  );
}

/** The console's form fields, one look: a text input, select or textarea, and its label above it. */
export const fieldClass = 'rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm text-zinc-900 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100';
export const labelClass = 'flex flex-col gap-1 text-xs text-zinc-500';
